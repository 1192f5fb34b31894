import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { components } from '@works-api/client';
import { newId } from '@works-api/prisma';
import { repoRoot } from '../../src/config';
import { createTenant } from '../support/fixtures';
import { addMember, inviteEmail } from '../support/roles';
import { startTestServer, type TestServer, type TestUser } from '../support/server';

/**
 * An invitation carries its inviter's authority no further than the inviter keeps it: when the inviter is removed,
 * leaves, or is demoted to a role that could not have sent it, the invitations they sent that exceed their new role
 * are withdrawn in the same transaction, so that the person invited can no longer accept them (and sees them no
 * more). The tenant's other invitations are untouched.
 */
let server: TestServer;
/** The migration that added the inviter index, and withdrew what was left from before. */
const MIGRATION = '20261207050046_invitations_by_inviter';
type Role = components['schemas']['Role'];

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

/** A tenant owned by a new user, with a new member in `role` who will invite. */
async function tenantWithInviter(role: Role) {
  const owner = await server.createUser('owner');
  const inviter = await server.createUser(`inviting-${role}`);
  const tenant = await createTenant(owner, `Authority ${role}`);
  await addMember(owner, tenant.id, inviter, role);
  return { owner, inviter, tenantId: tenant.id };
}

/** A user invited by `by` with `role`, and the invitation's id. */
async function invited(by: TestUser, tenantId: string, role: Role) {
  const user = await server.createUser(`invited-${role}`);
  const invitation = await inviteEmail(by, tenantId, user.email, role);
  return { user, invitationId: invitation.id };
}

const accept = (user: TestUser, invitationId: string) =>
  server.callAs(user, 'POST', `/v1/me/invitations/${invitationId}/accept`);
const pendingOf = async (user: TestUser) =>
  (await server.callAs(user, 'GET', '/v1/me/invitations')).body.invitations.totalCount;
const tenantInvitations = async (owner: TestUser, tenantId: string) =>
  (await server.callAs(owner, 'GET', `/v1/tenants/${tenantId}/invitations?limit=100`)).body.invitations.edges.map(
    (edge: { node: { id: string } }) => edge.node.id,
  );
const roleOf = (tenantId: string, userId: string) =>
  server.database.prisma.membership
    .findUnique({ where: { tenantId_userId: { tenantId, userId } }, select: { role: true } })
    .then((row) => row?.role ?? null);
const memberUrl = (tenantId: string, userId: string) => `/v1/tenants/${tenantId}/members/${userId}`;

/** Expects the invitation to be gone for its invitee: not listed, not accepted, no membership made. */
async function expectWithdrawn(
  tenantId: string,
  owner: TestUser,
  { user, invitationId }: Awaited<ReturnType<typeof invited>>,
) {
  expect(await pendingOf(user)).toBe(0);
  const accepted = await accept(user, invitationId);
  expect([accepted.status, accepted.body.code]).toEqual([404, 'not_found']);
  expect(await roleOf(tenantId, user.id)).toBeNull();
  expect(await tenantInvitations(owner, tenantId)).not.toContain(invitationId);
  expect(await server.database.prisma.invitation.count({ where: { id: invitationId } })).toBe(0);
}

describe('when the inviter is removed', () => {
  it("withdraws the invitations they sent: an admin's invitation to the admin role is no longer accepted", async () => {
    const { owner, inviter, tenantId } = await tenantWithInviter('admin');
    const asAdmin = await invited(inviter, tenantId, 'admin');
    const asMember = await invited(inviter, tenantId, 'member');
    const byOwner = await invited(owner, tenantId, 'admin');

    expect((await server.callAs(owner, 'DELETE', memberUrl(tenantId, inviter.id))).status).toBe(204);

    await expectWithdrawn(tenantId, owner, asAdmin);
    await expectWithdrawn(tenantId, owner, asMember);
    // Another member's invitation stays, and is accepted with its role.
    expect(await tenantInvitations(owner, tenantId)).toEqual([byOwner.invitationId]);
    expect((await accept(byOwner.user, byOwner.invitationId)).status).toBe(200);
    expect(await roleOf(tenantId, byOwner.user.id)).toBe('admin');
  });

  it('withdraws them when the inviter leaves by themselves, whatever their role', async () => {
    const { owner, tenantId } = await tenantWithInviter('member');
    const other = await server.createUser('second-owner');
    await addMember(owner, tenantId, other, 'owner');
    const asOwner = await invited(owner, tenantId, 'owner');
    const byOther = await invited(other, tenantId, 'member');

    // The first owner leaves (another owner remains).
    expect((await server.callAs(owner, 'DELETE', memberUrl(tenantId, owner.id))).status).toBe(204);

    await expectWithdrawn(tenantId, other, asOwner);
    expect(await tenantInvitations(other, tenantId)).toEqual([byOther.invitationId]);
  });
});

describe('when the inviter is demoted', () => {
  it('withdraws every invitation of an admin made a member (a member invites nobody)', async () => {
    const { owner, inviter, tenantId } = await tenantWithInviter('admin');
    const asAdmin = await invited(inviter, tenantId, 'admin');
    const asMember = await invited(inviter, tenantId, 'member');

    const demoted = await server.callAs(owner, 'PATCH', memberUrl(tenantId, inviter.id), { role: 'member' });
    expect(demoted.status).toBe(200);

    await expectWithdrawn(tenantId, owner, asAdmin);
    await expectWithdrawn(tenantId, owner, asMember);
    // Promoted again, they do not come back: the invitations are gone, not suspended.
    expect((await server.callAs(owner, 'PATCH', memberUrl(tenantId, inviter.id), { role: 'admin' })).status).toBe(200);
    expect((await accept(asAdmin.user, asAdmin.invitationId)).status).toBe(404);
  });

  it('withdraws only what an owner made an admin can no longer grant: their invitations to the owner role', async () => {
    const { owner, inviter, tenantId } = await tenantWithInviter('owner');
    const asOwner = await invited(inviter, tenantId, 'owner');
    const asAdmin = await invited(inviter, tenantId, 'admin');

    const demoted = await server.callAs(owner, 'PATCH', memberUrl(tenantId, inviter.id), { role: 'admin' });
    expect(demoted.status).toBe(200);

    await expectWithdrawn(tenantId, owner, asOwner);
    // An admin may invite admins: that invitation keeps its role and is accepted as admin.
    expect(await pendingOf(asAdmin.user)).toBe(1);
    expect((await accept(asAdmin.user, asAdmin.invitationId)).status).toBe(200);
    expect(await roleOf(tenantId, asAdmin.user.id)).toBe('admin');
  });

  it('keeps everything when the role does not change, or goes up', async () => {
    const { owner, inviter, tenantId } = await tenantWithInviter('admin');
    const asAdmin = await invited(inviter, tenantId, 'admin');
    for (const role of ['admin', 'owner'] as const)
      expect((await server.callAs(owner, 'PATCH', memberUrl(tenantId, inviter.id), { role })).status).toBe(200);
    expect((await accept(asAdmin.user, asAdmin.invitationId)).status).toBe(200);
    expect(await roleOf(tenantId, asAdmin.user.id)).toBe('admin');
  });
});

describe('the invitations left from before', () => {
  it('are withdrawn by the migration when their inviter left or lost the role that sent them, and only those', async () => {
    const { owner, inviter: admin, tenantId } = await tenantWithInviter('admin');
    const member = await server.createUser('plain-member');
    await addMember(owner, tenantId, member, 'member');
    const gone = await server.createUser('gone');
    const invitations = [
      { by: owner.id, role: 'owner', kept: true },
      { by: admin.id, role: 'admin', kept: true },
      { by: admin.id, role: 'owner', kept: false }, // sent by an owner since demoted to admin
      { by: member.id, role: 'member', kept: false }, // sent by an admin since demoted to member
      { by: gone.id, role: 'admin', kept: false }, // sent by a member since removed
    ] as const;
    // As a server before this change left them: written straight to the table.
    const ids = [];
    for (const { by, role } of invitations) {
      const id = newId();
      await server.database.prisma.invitation.create({
        data: {
          id,
          tenantId,
          email: `${id}@example.com`,
          role,
          firstName: '',
          lastName: '',
          invitedBy: by,
          createdAt: new Date(),
          expiresAt: new Date(Date.now() + 86_400_000),
        },
      });
      ids.push(id);
    }
    const migration = readFileSync(path.join(repoRoot, 'prisma/migrations', MIGRATION, 'migration.sql'), 'utf8');
    const cleanup = migration.slice(migration.indexOf('DELETE FROM'));
    expect(cleanup).toMatch(/^DELETE FROM "invitations"/);
    await server.database.prisma.$executeRawUnsafe(cleanup);
    const left = await server.database.prisma.invitation.findMany({ where: { id: { in: ids } }, select: { id: true } });
    expect(left.map((row) => row.id).sort()).toEqual(ids.filter((_, i) => invitations[i]!.kept).sort());
  });
});
