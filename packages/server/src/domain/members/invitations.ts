import type { Db } from '@works-api/prisma';
import { countMembersAddedSql, sendStatement } from '@works-api/prisma';
import type { Prisma } from '@works-api/prisma/client';
import { isId, newId } from '@works-api/prisma';
import { type Actor, authorize, minimumRole, type Role, roleAtLeast } from '../access';
import { notFound, ProblemError } from '../errors';
import { invitationLimitReached } from '../limits';
import { ALLOWANCE_CALL, allowanceParams, type MailCaps } from '../../mail/caps';
import { MAIL_COLUMNS } from '@works-api/prisma';
import { newestFirst, type Page, type PageRequest, readPage } from '../paging';
import type { Schemas } from '../schemas';
import { getTenant } from '../tenants/tenants';
import { presentUserRecord, userRecord } from '../users/present';
import { outboxRow } from '../../webhooks/events';
import { lockTenantMembers, presentMember, withUser } from './membership';

/**
 * Membership by consent: adding an email to a tenant only ever makes an invitation (whether or not an account has
 * that email, so the answer tells nothing about who has one), and the person joins by accepting it, signed in with
 * their own account. The inviter's names for them are only the greeting of the invitation email.
 */
const withInviterAndTenant = { inviter: userRecord, tenant: { select: { id: true, name: true } } } as const;

/** An invitation as read with its inviter's user record and its tenant's id and name. */
type InvitationRow = Prisma.InvitationGetPayload<{ include: typeof withInviterAndTenant }>;

export const presentInvitation = (row: InvitationRow): Schemas['Invitation'] => ({
  id: row.id,
  email: row.email,
  role: row.role,
  firstName: row.firstName,
  lastName: row.lastName,
  invitedBy: presentUserRecord(row.inviter),
  tenant: { id: row.tenant.id, name: row.tenant.name },
  createdAt: row.createdAt.toISOString(),
  expiresAt: row.expiresAt.toISOString(),
});

export const alreadyInvited = (): ProblemError =>
  new ProblemError('already_invited', 'This email is already invited to the tenant.');

/** What is not an answerable invitation of the caller's: another's, expired, withdrawn or answered. */
const noInvitation = (): ProblemError =>
  new ProblemError('not_found', 'No pending invitation with this id: it may have expired or been withdrawn.');

export interface NewInvitation {
  email: string;
  role: Role;
  firstName: string;
  lastName: string;
}

/**
 * Inside addMember's transaction, under the tenant's membership lock (the email is no member's): creates the
 * invitation and queues its email, which the mail sender renders when it sends it (a withdrawn invitation is not
 * sent). Expired invitations of the tenant are deleted first, so that they neither count nor block inviting their
 * email again. At most `cap` invitations per tenant, counted under that lock, reading at most `cap` rows. The email
 * counts against the tenant's daily email caps as it is queued (over one, the transaction rolls back: 429), not as
 * a pending row, so inviting and withdrawing in a loop cannot mail an address without end; an address that stopped
 * the tenant's emails is invited without one.
 */
export async function createInvitation(
  tx: Prisma.TransactionClient,
  actor: Actor,
  tenantId: string,
  input: NewInvitation,
  { cap, ttlMs, caps }: { cap: number; ttlMs: number; caps: MailCaps },
  now = new Date(),
): Promise<Schemas['Invitation']> {
  await tx.$executeRaw`DELETE FROM invitations WHERE tenant_id = ${tenantId}::uuid AND expires_at <= ${now}`;
  const [counted] = await tx.$queryRaw<Array<{ n: number; invited: boolean }>>`
    SELECT (SELECT count(*)::int FROM (SELECT 1 FROM invitations WHERE tenant_id = ${tenantId}::uuid LIMIT ${cap}) bounded) AS n,
           EXISTS (SELECT 1 FROM invitations WHERE tenant_id = ${tenantId}::uuid AND email = ${input.email}) AS invited`;
  if (counted?.invited) throw alreadyInvited();
  if ((counted?.n ?? 0) >= cap) throw invitationLimitReached(cap);
  const row = await tx.invitation.create({
    data: {
      id: newId(),
      tenantId,
      invitedBy: actor.userId,
      ...input,
      createdAt: now,
      expiresAt: new Date(now.getTime() + ttlMs),
    },
    include: withInviterAndTenant,
  });
  // In the transaction: the email is counted and sent only if the invitation commits.
  const [allowance] = await sendStatement<{ stopped: boolean }>(
    tx,
    `SELECT ${ALLOWANCE_CALL} AS stopped`,
    allowanceParams(tenantId, actor.userId, input.email, caps, now),
  );
  if (allowance?.stopped) return presentInvitation(row);
  await sendStatement(
    tx,
    `INSERT INTO mail_outbox (${MAIL_COLUMNS})
     VALUES (:mailId::uuid, 'invitation', :tenantId::uuid, NULL, :invitationId::uuid, :now::timestamptz, :now::timestamptz)`,
    { mailId: newId(), tenantId, invitationId: row.id, now: now.toISOString() },
  );
  return presentInvitation(row);
}

/** The tenant's invitations (owners and admins), newest first, expired ones included until replaced. */
export async function listInvitations(db: Db, actor: Actor, tenantId: string, request: PageRequest) {
  await authorize(db, actor, tenantId, 'manageMembers');
  return readPage(request, {
    rows: (page: Page) => {
      const { where, ...window } = newestFirst(page, 'id');
      return db.prisma.invitation.findMany({ where: { tenantId, ...where }, include: withInviterAndTenant, ...window });
    },
    // A list the cap bounds (MAX_INVITATIONS_PER_TENANT): its count reads at most that many index entries.
    totalCount: () => db.prisma.invitation.count({ where: { tenantId } }),
    present: presentInvitation,
  });
}

const ROLES: readonly Role[] = ['owner', 'admin', 'member'];

/**
 * The roles a member in `role` (null: no longer a member) may invite to, as addMember checks it: inviting needs
 * `manageMembers`, and inviting to the owner role `manageOwners` too.
 */
export function rolesGrantableBy(role: Role | null): Role[] {
  if (role === null || !roleAtLeast(role, minimumRole.manageMembers)) return [];
  return ROLES.filter((granted) => granted !== 'owner' || roleAtLeast(role, minimumRole.manageOwners));
}

/**
 * An invitation carries no more authority than its inviter still has. Inside a member change's transaction, under
 * the tenant's membership lock: withdraws the pending invitations `inviterId` sent to the tenant that their new role
 * (`null`: they left or were removed) could not send, so that none is accepted with a role its inviter can no
 * longer grant. One range of the (invited_by, tenant_id) index, whatever the size of the tenant's invitations;
 * nothing to do for a role that may grant every role.
 */
export async function withdrawInvitationsBeyond(
  tx: Prisma.TransactionClient,
  tenantId: string,
  inviterId: string,
  role: Role | null,
): Promise<void> {
  const kept = rolesGrantableBy(role);
  if (kept.length === ROLES.length) return;
  await tx.$executeRaw`
    DELETE FROM invitations
    WHERE invited_by = ${inviterId}::uuid AND tenant_id = ${tenantId}::uuid AND NOT (role::text = ANY(${kept}::text[]))`;
}

/** Withdraws an invitation; only an owner may withdraw one to the owner role (as only an owner may grant it). */
export async function deleteInvitation(db: Db, actor: Actor, tenantId: string, invitationId: string): Promise<void> {
  const caller = await authorize(db, actor, tenantId, 'manageMembers');
  // Checked before any statement: an id that is not one of ours names no invitation, so nothing may be deleted.
  if (!isId(invitationId)) throw notFound('invitation');
  const roles = rolesGrantableBy(caller.role);
  const { count } = await db.prisma.invitation.deleteMany({
    where: { id: invitationId, tenantId, role: { in: roles } },
  });
  if (count > 0) return;
  const exists = await db.prisma.invitation.findFirst({ where: { id: invitationId, tenantId }, select: { id: true } });
  if (exists) {
    throw new ProblemError('forbidden', 'Only an owner can grant, change or remove the owner role.');
  }
  throw notFound('invitation');
}

/** The caller's own pending invitations: those to their email, not expired. */
const pendingFor = (actor: Actor, now: Date) => ({ email: actor.user.email, expiresAt: { gt: now } });

/**
 * The caller's pending invitations, newest first, by (email, id). Its count reads the caller's invitations, at
 * most one per tenant that invited them: a list that stays short, so no kept counter is needed.
 */
export async function listMyInvitations(db: Db, actor: Actor, request: PageRequest) {
  const now = new Date();
  return readPage(request, {
    rows: (page: Page) => {
      const { where, ...window } = newestFirst(page, 'id');
      return db.prisma.invitation.findMany({
        where: { ...pendingFor(actor, now), ...where },
        include: withInviterAndTenant,
        ...window,
      });
    },
    totalCount: () => db.prisma.invitation.count({ where: pendingFor(actor, now) }),
    present: presentInvitation,
  });
}

/**
 * Accepts one of the caller's pending invitations: under the tenant's membership lock (as every member change), the
 * invitation is deleted and the caller becomes a member with its role, with the `member.added` event, in one
 * transaction. Returns the tenant as the new member now reads it.
 */
export async function acceptInvitation(db: Db, actor: Actor, invitationId: string): Promise<Schemas['Tenant']> {
  if (!isId(invitationId)) throw noInvitation();
  const now = new Date();
  const pending = await db.prisma.invitation.findFirst({
    where: { id: invitationId, ...pendingFor(actor, now) },
    select: { tenantId: true },
  });
  if (!pending) throw noInvitation();
  const { tenantId } = pending;
  await db.prisma.$transaction(async (tx) => {
    await lockTenantMembers(tx, tenantId);
    // Again under the lock: a withdrawal, a decline or another accept may have come first.
    const [taken] = await tx.$queryRaw<Array<{ role: Role }>>`
      DELETE FROM invitations
      WHERE id = ${invitationId}::uuid AND email = ${actor.user.email} AND expires_at > ${now}
      RETURNING role::text AS role`;
    if (!taken) throw noInvitation();
    const member = await tx.membership.create({
      data: { id: newId(), tenantId, userId: actor.userId, role: taken.role, createdAt: now },
      include: withUser,
    });
    await sendStatement(
      tx,
      `WITH added (tenant_id, user_id) AS (VALUES (:tenantId::uuid, :userId::uuid)), ${countMembersAddedSql('added')}
       SELECT 1`,
      { tenantId, userId: actor.userId },
    );
    await tx.webhookEvent.create({
      data: outboxRow('member.added', tenantId, { member: presentMember(member) }, now),
    });
  });
  db.outbox.webhooks.signal();
  return getTenant(db, actor, tenantId);
}

/** Declines (deletes) one of the caller's pending invitations. */
export async function declineInvitation(db: Db, actor: Actor, invitationId: string): Promise<void> {
  if (!isId(invitationId)) throw noInvitation();
  const { count } = await db.prisma.invitation.deleteMany({
    where: { id: invitationId, ...pendingFor(actor, new Date()) },
  });
  if (count === 0) throw noInvitation();
}
