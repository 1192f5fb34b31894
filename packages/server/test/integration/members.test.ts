import { Client } from 'pg';
import { createTenant } from '../support/fixtures';
import { eventually } from '../support/load';
import { addMember, addNewMember, type RoleFixture, tenantWithRoles } from '../support/roles';
import { startTestServer, type TestServer, type TestUser } from '../support/server';

/**
 * Members: list, invite by email (joining by consent), change role, remove or leave; only owners touch the owner
 * role; a tenant keeps an owner.
 */
let server: TestServer;
let roles: RoleFixture;

beforeAll(async () => {
  server = await startTestServer();
  roles = await tenantWithRoles(server, 'Members Inc');
});
afterAll(() => server.close());

const iso = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

const membersUrl = (tenantId = roles.tenant.id) => `/v1/tenants/${tenantId}/members` as const;
const memberUrl = (userId: string, tenantId = roles.tenant.id) => `${membersUrl(tenantId)}/${userId}` as const;

const add = (by: TestUser, email: string, role: string, extra: object = {}, tenantId = roles.tenant.id) =>
  server.callAs(by, 'POST', membersUrl(tenantId), { email, role, ...extra });
const setRole = (by: TestUser, userId: string, role: string, tenantId = roles.tenant.id) =>
  server.callAs(by, 'PATCH', memberUrl(userId, tenantId), { role });
const remove = (by: TestUser, userId: string, tenantId = roles.tenant.id) =>
  server.callAs(by, 'DELETE', memberUrl(userId, tenantId));

async function roleOf(userId: string, tenantId = roles.tenant.id): Promise<string | undefined> {
  const { body } = await server.callAs(roles.owner, 'GET', `${membersUrl(tenantId)}?limit=100`);
  return body.members.edges.find((edge: { node: { user: { id: string } } }) => edge.node.user.id === userId)?.node.role;
}

describe('GET /tenants/{id}/members', () => {
  it('lists every member with their role and user (not when their account was created), the owner included', async () => {
    const { status, body } = await server.callAs(roles.member, 'GET', membersUrl());
    expect(status).toBe(200);
    const nodes = body.members.edges.map((edge) => edge.node);
    expect(body.members.totalCount).toBe(3);
    expect(nodes).toEqual(
      expect.arrayContaining([
        {
          role: 'owner',
          user: { id: roles.owner.id, firstName: 'owner', lastName: 'Tester', email: roles.owner.email },
          createdAt: expect.stringMatching(iso),
        },
        expect.objectContaining({ role: 'admin', user: expect.objectContaining({ id: roles.admin.id }) }),
        expect.objectContaining({ role: 'member', user: expect.objectContaining({ id: roles.member.id }) }),
      ]),
    );
    // Newest first: the owner joined first, so comes last.
    expect(nodes.at(-1)!.role).toBe('owner');
  });
});

describe('GET /tenants/{id}/members/{user_id}', () => {
  const STRONG_TAG = /^"[A-Za-z0-9_-]{27}"$/;
  const read = <Url extends string>(by: TestUser, url: Url, headers: Record<string, string> = {}) =>
    server.call(url, { apiKey: by.apiKey, headers });
  const patch = (by: TestUser, userId: string, role: string, headers: Record<string, string>) =>
    server.call(memberUrl(userId), { method: 'PATCH', apiKey: by.apiKey, json: { role }, headers });

  it('returns the member as the list shows it, to every role, with a strong ETag', async () => {
    const member = await addNewMember(server, roles.admin, roles.tenant.id, 'member', 'read');
    let tag: string | null = null;
    for (const by of [roles.owner, roles.admin, roles.member]) {
      const res = await read(by, memberUrl(member.user.id));
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ member });
      expect(res.headers.get('etag')).toMatch(STRONG_TAG);
      tag ??= res.headers.get('etag');
      expect(res.headers.get('etag')).toBe(tag);
    }
    const { body } = await server.callAs(roles.member, 'GET', `${membersUrl()}?limit=100`);
    expect(body.members.edges.map((edge: { node: unknown }) => edge.node)).toContainEqual(member);
  });

  it('answers 304 to If-None-Match while the member is unchanged, 200 with a new tag once the role changed', async () => {
    const target = (await addNewMember(server, roles.owner, roles.tenant.id, 'member')).user.id;
    const tag = (await read(roles.member, memberUrl(target))).headers.get('etag')!;
    const cached = await read(roles.member, memberUrl(target), { 'If-None-Match': tag });
    expect(cached.status).toBe(304);
    expect(cached.headers.get('etag')).toBe(tag);
    expect(await cached.text()).toBe('');
    expect((await read(roles.member, memberUrl(target), { 'If-None-Match': '"other"' })).status).toBe(200);

    expect((await setRole(roles.admin, target, 'admin')).status).toBe(200);
    const changed = await read(roles.member, memberUrl(target), { 'If-None-Match': tag });
    expect(changed.status).toBe(200);
    expect(changed.headers.get('etag')).not.toBe(tag);
    expect((await changed.json()).member.role).toBe('admin');
  });

  it('gives the ETag updateMember checks: it works as If-Match, and a stale one is 412 with nothing changed', async () => {
    const target = (await addNewMember(server, roles.owner, roles.tenant.id, 'member')).user.id;
    const tag = (await read(roles.admin, memberUrl(target))).headers.get('etag')!;

    const promoted = await patch(roles.admin, target, 'admin', { 'If-Match': tag });
    expect(promoted.status).toBe(200);
    const newTag = promoted.headers.get('etag');
    expect(newTag).not.toBe(tag);
    // What the PATCH answered is what a read now gives, tag included.
    const after = await read(roles.admin, memberUrl(target));
    expect(after.headers.get('etag')).toBe(newTag);
    expect((await after.json()).member).toEqual((await promoted.json()).member);

    // The tag read before the change is stale now: refused, the role stays.
    const stale = await patch(roles.owner, target, 'member', { 'If-Match': tag });
    expect(stale.status).toBe(412);
    expect(stale.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await stale.json()).toMatchObject({ status: 412, code: 'precondition_failed' });
    expect(await roleOf(target)).toBe('admin');
    expect((await patch(roles.owner, target, 'member', { 'If-Match': newTag! })).status).toBe(200);
  });

  it('answers 404 for an unknown user, a user who is not a member and a removed member', async () => {
    const removed = await server.createUser('removed');
    await addMember(roles.owner, roles.tenant.id, removed, 'member');
    expect((await remove(roles.owner, removed.id)).status).toBe(204);
    const unknown = '0193a1b1-1b2c-7d3e-9f40-5b6c7d8e9fa0';
    for (const userId of [unknown, roles.stranger.id, removed.id, 'not-an-id']) {
      const { status, body } = await server.callAs(roles.member, 'GET', memberUrl(userId));
      expect([userId, status, body.code, body.detail]).toEqual([userId, 404, 'not_found', 'No member with this id.']);
    }
    // An id with characters no id has breaks the contract (400), as on every path.
    const { status, body } = await server.callAs(roles.member, 'GET', memberUrl('a.b'));
    expect([status, body.code]).toEqual([400, 'validation_failed']);
  });

  it('answers 404 to outsiders, members or not, exactly as for a tenant that does not exist', async () => {
    const answers = await Promise.all([
      server.callAs(roles.stranger, 'GET', memberUrl(roles.member.id)),
      server.callAs(roles.stranger, 'GET', memberUrl(roles.stranger.id)),
      server.callAs(roles.stranger, 'GET', memberUrl(roles.member.id, '0193a1b2-7c3d-7e4f-8a9b-0c1d2e3f4a5b')),
    ]);
    for (const { status, body, headers } of answers) {
      expect([status, body.code, body.detail]).toEqual([404, 'not_found', 'No tenant with this id.']);
      expect(headers.get('etag')).toBeNull();
    }
  });
});

describe('POST /tenants/{id}/members: membership by consent', () => {
  const accept = (by: TestUser, invitationId: string) =>
    server.callAs(by, 'POST', `/v1/me/invitations/${invitationId}/accept`);

  it('answers an existing account and an unknown email alike: 202, the same shape, nothing of the account', async () => {
    const user = await server.createUser('existing');
    const unknown = `nobody-${user.id}@example.com`;
    const [known, invited] = await Promise.all([
      add(roles.admin, user.email.toUpperCase(), 'member', { firstName: 'Typed', lastName: 'Byadmin' }),
      add(roles.admin, unknown, 'member', { firstName: 'Typed', lastName: 'Byadmin' }),
    ]);
    expect([known.status, invited.status]).toEqual([202, 202]);
    expect([known.headers.get('location'), known.headers.get('etag')]).toEqual([null, null]);
    const shape = (invitation: object) =>
      JSON.stringify(invitation, (_key, value: unknown) => (typeof value === 'string' ? 'string' : value));
    expect(shape(known.body.invitation)).toBe(shape(invited.body.invitation));
    // What the inviter typed, never the account's names or id.
    expect(known.body.invitation).toMatchObject({ email: user.email, firstName: 'Typed', lastName: 'Byadmin' });
    expect(JSON.stringify(known.body)).not.toContain(user.id);
    // Nobody joins without accepting.
    expect(await roleOf(user.id)).toBeUndefined();
    expect((await server.callAs(user, 'GET', `/v1/tenants/${roles.tenant.id}`)).status).toBe(404);
  });

  it('makes the person a member only when they accept, with their own names, and a member.added event', async () => {
    const user = await server.createUser('joining');
    const { body } = await add(roles.admin, user.email, 'admin', { firstName: 'Mallory', lastName: 'Says' });
    const invitation = body.invitation;
    const mine = await server.callAs(user, 'GET', '/v1/me/invitations');
    expect(mine.body.invitations.edges.map((edge) => edge.node)).toEqual([invitation]);
    expect(mine.body.invitations.totalCount).toBe(1);
    // Nobody else can answer it: 404, as for an id that names nothing.
    for (const other of [roles.member, roles.admin, roles.stranger]) {
      const stolen = await accept(other, invitation.id);
      expect([stolen.status, stolen.body.code]).toEqual([404, 'not_found']);
    }
    const accepted = await accept(user, invitation.id);
    expect(accepted.status).toBe(200);
    expect(accepted.body.tenant.id).toBe(roles.tenant.id);
    expect(accepted.body.tenant.members.nodes).toContainEqual({
      role: 'admin',
      user: { firstName: 'joining', lastName: 'Tester', email: user.email },
    });
    expect(await roleOf(user.id)).toBe('admin');
    const events = await server.database.prisma.webhookEvent.findMany({
      where: { tenantId: roles.tenant.id, type: 'member.added' },
    });
    expect(events.map((row) => JSON.parse(row.body).data.member.user)).toContainEqual({
      id: user.id,
      firstName: 'joining',
      lastName: 'Tester',
      email: user.email,
    });
    // Answered: gone from both lists, and a second accept is 404.
    expect((await server.callAs(user, 'GET', '/v1/me/invitations')).body.invitations.totalCount).toBe(0);
    expect((await accept(user, invitation.id)).status).toBe(404);
  });

  it('answers 409 already_member for the email of a member', async () => {
    const { status, body } = await add(roles.owner, roles.member.email, 'admin');
    expect(status).toBe(409);
    expect(body.code).toBe('already_member');
    expect(await roleOf(roles.member.id)).toBe('member');
  });

  it('lets only an owner invite an owner', async () => {
    const user = await server.createUser('co-owner');
    const byAdmin = await add(roles.admin, user.email, 'owner');
    expect([byAdmin.status, byAdmin.body.code]).toEqual([403, 'forbidden']);
    const byOwner = await add(roles.owner, user.email, 'owner');
    expect(byOwner.status).toBe(202);
    expect((await accept(user, byOwner.body.invitation.id)).status).toBe(200);
    expect(await roleOf(user.id)).toBe('owner');
  });

  it('refuses members (403) and non-members (404), inviting nobody', async () => {
    const user = await server.createUser('refused');
    expect((await add(roles.member, user.email, 'member')).status).toBe(403);
    expect((await add(roles.stranger, user.email, 'member')).status).toBe(404);
    expect((await server.callAs(user, 'GET', '/v1/me/invitations')).body.invitations.totalCount).toBe(0);
  });
});

describe('PATCH /tenants/{id}/members/{user_id}', () => {
  let target: string;
  beforeEach(async () => {
    target = (await addNewMember(server, roles.owner, roles.tenant.id, 'member')).user.id;
  });

  it('lets an admin move a member between member and admin, and answers with the member', async () => {
    const promoted = await setRole(roles.admin, target, 'admin');
    expect(promoted.status).toBe(200);
    expect(promoted.body.member).toMatchObject({ role: 'admin', user: { id: target } });
    expect((await setRole(roles.admin, target, 'member')).body.member.role).toBe('member');
    // Setting the role a member already has changes nothing.
    expect((await setRole(roles.admin, target, 'member')).status).toBe(200);
    expect(await roleOf(target)).toBe('member');
  });

  it('writes a member.role_changed event for each change, with the new member and the previous role', async () => {
    await setRole(roles.admin, target, 'admin');
    await setRole(roles.admin, target, 'admin'); // no change, no event
    await setRole(roles.owner, target, 'member');
    const rows = await server.database.prisma.webhookEvent.findMany({
      where: { tenantId: roles.tenant.id, type: 'member.role_changed' },
      orderBy: { id: 'asc' },
    });
    const mine = rows.map((row) => JSON.parse(row.body)).filter((event) => event.data.member.user.id === target);
    expect(mine.map((event) => [event.data.previousRole, event.data.member.role])).toEqual([
      ['member', 'admin'],
      ['admin', 'member'],
    ]);
    expect(mine[0]).toMatchObject({ type: 'member.role_changed', tenantId: roles.tenant.id });
  });

  it('lets only an owner grant, change or take away the owner role', async () => {
    const grantByAdmin = await setRole(roles.admin, target, 'owner');
    expect([grantByAdmin.status, grantByAdmin.body.code]).toEqual([403, 'forbidden']);
    expect(await roleOf(target)).toBe('member');

    expect((await setRole(roles.owner, target, 'owner')).status).toBe(200);
    for (const role of ['admin', 'member', 'owner']) {
      const byAdmin = await setRole(roles.admin, target, role);
      expect([role, byAdmin.status, byAdmin.body.code]).toEqual([role, 403, 'forbidden']);
    }
    const removeByAdmin = await remove(roles.admin, target);
    expect(removeByAdmin.status).toBe(403);
    expect(await roleOf(target)).toBe('owner');

    expect((await setRole(roles.owner, target, 'admin')).status).toBe(200);
    expect(await roleOf(target)).toBe('admin');
  });

  it('refuses members (403) and non-members (404)', async () => {
    expect((await setRole(roles.member, target, 'admin')).status).toBe(403);
    expect((await setRole(roles.stranger, target, 'admin')).status).toBe(404);
    expect(await roleOf(target)).toBe('member');
  });

  it('answers 404 for a user who is not a member', async () => {
    const { status, body } = await setRole(roles.owner, roles.stranger.id, 'admin');
    expect([status, body.code]).toEqual([404, 'not_found']);
  });
});

describe('the last owner', () => {
  it('can be neither demoted nor removed (409 last_owner), until another owner exists', async () => {
    const owner = await server.createUser('sole');
    const tenant = await createTenant(owner, 'Sole owner');
    for (const role of ['admin', 'member']) {
      const demoted = await setRole(owner, owner.id, role, tenant.id);
      expect([role, demoted.status, demoted.body.code]).toEqual([role, 409, 'last_owner']);
    }
    const removed = await remove(owner, owner.id, tenant.id);
    expect([removed.status, removed.body.code]).toEqual([409, 'last_owner']);
    expect((await server.callAs(owner, 'GET', `/v1/tenants/${tenant.id}`)).body.tenant.members.nodes).toEqual([
      { role: 'owner', user: expect.objectContaining({ email: owner.email }) },
    ]);

    // With a second owner, the first may step down; then the second is the last one.
    const second = await server.createUser('second');
    await addMember(owner, tenant.id, second, 'owner');
    expect((await setRole(owner, owner.id, 'admin', tenant.id)).status).toBe(200);
    const last = await remove(second, second.id, tenant.id);
    expect([last.status, last.body.code]).toEqual([409, 'last_owner']);
    expect((await remove(second, owner.id, tenant.id)).status).toBe(204);
  });
});

describe('DELETE /tenants/{id}/members/{user_id}', () => {
  it('removes the member (204, no body): the tenant no longer exists for them', async () => {
    const user = await server.createUser('leaving');
    await addMember(roles.owner, roles.tenant.id, user, 'admin');
    expect((await server.callAs(user, 'GET', `/v1/tenants/${roles.tenant.id}`)).status).toBe(200);

    const res = await server.call(memberUrl(user.id), { method: 'DELETE', apiKey: roles.admin.apiKey });
    expect(res.status).toBe(204);
    expect(await res.text()).toBe('');
    expect(await roleOf(user.id)).toBeUndefined();
    expect((await server.callAs(user, 'GET', `/v1/tenants/${roles.tenant.id}`)).status).toBe(404);
    expect((await server.callAs(user, 'GET', '/v1/tenants')).body.tenants.edges).toEqual([]);

    // Removing again: no such member. Inviting back works.
    expect((await remove(roles.admin, user.id)).status).toBe(404);
    expect((await add(roles.admin, user.email, 'member')).status).toBe(202);
  });

  it('lets any member leave (their own membership), with a member.removed event; an owner too while another remains', async () => {
    for (const role of ['member', 'admin', 'owner'] as const) {
      const user = await server.createUser(`leaving-${role}`);
      await addMember(roles.owner, roles.tenant.id, user, role);
      const left = await remove(user, user.id);
      expect([role, left.status]).toEqual([role, 204]);
      expect(await roleOf(user.id)).toBeUndefined();
      expect((await server.callAs(user, 'GET', `/v1/tenants/${roles.tenant.id}`)).status).toBe(404);
      const events = await server.database.prisma.webhookEvent.findMany({
        where: { tenantId: roles.tenant.id, type: 'member.removed' },
      });
      expect(events.map((row) => JSON.parse(row.body).data.member.user.id)).toContain(user.id);
    }
  });

  it('refuses members (403) removing someone else, and non-members (404)', async () => {
    const target = (await addNewMember(server, roles.owner, roles.tenant.id, 'member')).user.id;
    expect((await remove(roles.member, target)).status).toBe(403);
    expect((await remove(roles.stranger, target)).status).toBe(404);
    expect(await roleOf(target)).toBe('member');
  });
});

describe('a member change while its caller is being demoted', () => {
  const onPostgres = process.env.DATABASE_URL ? it : it.skip;
  if (!process.env.DATABASE_URL) console.log('members: the role-check race runs on PostgreSQL only (set DATABASE_URL)');
  // The embedded database runs one transaction at a time, so there the two changes cannot overlap at all.
  onPostgres(
    "checks the caller's role inside the change: a demotion cannot complete while it is in flight",
    async () => {
      const [first, second, third] = await Promise.all(['first', 'second', 'third'].map((n) => server.createUser(n)));
      const tenant = await createTenant(first!, 'Demotion race');
      await addMember(first!, tenant.id, second!, 'owner');
      await addMember(first!, tenant.id, third!, 'member');
      const blocker = new Client({ connectionString: process.env.DATABASE_URL });
      await blocker.connect();
      const lockWaiters = async () =>
        (
          await blocker.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()`,
          )
        ).rows[0]!.n;
      try {
        // Hold the third member's row, so that the second owner's promotion of them stops right before its write,
        // after every check it makes.
        await blocker.query('BEGIN');
        await blocker.query('SELECT 1 FROM memberships WHERE tenant_id = $1 AND user_id = $2 FOR UPDATE', [
          tenant.id,
          third!.id,
        ]);
        let promotionDone = false;
        const promotion = setRole(second!, third!.id, 'owner', tenant.id).finally(() => (promotionDone = true));
        await eventually(async () => expect(await lockWaiters()).toBeGreaterThanOrEqual(1), { pauseMs: 10 });
        // Meanwhile the first owner demotes the second. It must not complete before the promotion: the promotion
        // acts on the second owner's role, which must still hold when it commits.
        let demotionDone = false;
        const demotion = setRole(first!, second!.id, 'admin', tenant.id).then((res) => {
          demotionDone = true;
          return { ...res, promotionDoneFirst: promotionDone };
        });
        await eventually(async () => expect(demotionDone || (await lockWaiters()) >= 2).toBe(true), { pauseMs: 10 });
        await blocker.query('ROLLBACK');
        const [promoted, demoted] = await Promise.all([promotion, demotion]);
        expect(demoted.status).toBe(200);
        expect([promoted.status, demoted.promotionDoneFirst]).toEqual([200, true]);
        const roleIn = async (userId: string) =>
          (
            await server.database.prisma.membership.findUnique({
              where: { tenantId_userId: { tenantId: tenant.id, userId } },
            })
          )?.role;
        expect([await roleIn(third!.id), await roleIn(second!.id)]).toEqual(['owner', 'admin']);
      } finally {
        await blocker.query('ROLLBACK').catch(() => undefined);
        await blocker.end();
      }
    },
  );
});
