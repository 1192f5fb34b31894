import type { Db, InvitationRow, Transaction } from '@works-api/prisma';
import {
  countInvitationsAndFind,
  countInvitationsOf,
  countPendingInvitations,
  declinePendingInvitation,
  deleteExpiredInvitations,
  deleteInvitationsBeyond,
  deleteInvitationTo,
  findPendingInvitation,
  insertInvitation,
  insertMembership,
  insertWebhookEvent,
  inTransaction,
  invitationExists,
  invitationsPage,
  isId,
  lockTenantMembers,
  newId,
  pendingInvitationsPage,
  queueInvitationEmail,
  takeMailAllowance,
  takePendingInvitation,
} from '@works-api/prisma';
import { type Actor, authorize, minimumRole, type Role, roleAtLeast } from '../access';
import { notFound, ProblemError } from '../errors';
import { invitationLimitReached } from '../limits';
import type { MailCaps } from '../../mail/caps';
import { type Page, type PageRequest, readPage } from '../paging';
import type { Schemas } from '../schemas';
import { getTenant } from '../tenants/tenants';
import { presentUserRecord } from '../users/present';
import { outboxRow } from '../../webhooks/events';
import { presentMember } from './membership';

/**
 * Membership by consent: adding an email to a tenant only ever makes an invitation (whether or not an account has
 * that email, so the answer tells nothing about who has one), and the person joins by accepting it, signed in with
 * their own account. The inviter's names for them are only the greeting of the invitation email.
 */

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
  tx: Transaction,
  actor: Actor,
  tenantId: string,
  input: NewInvitation,
  { cap, ttlMs, caps }: { cap: number; ttlMs: number; caps: MailCaps },
  now = new Date(),
): Promise<Schemas['Invitation']> {
  await deleteExpiredInvitations(tx, tenantId, now);
  const counted = await countInvitationsAndFind(tx, tenantId, input.email, cap);
  if (counted.invited) throw alreadyInvited();
  if (counted.n >= cap) throw invitationLimitReached(cap);
  const row = await insertInvitation(tx, {
    id: newId(),
    tenantId,
    invitedBy: actor.userId,
    ...input,
    createdAt: now,
    expiresAt: new Date(now.getTime() + ttlMs),
  });
  // In the transaction: the email is counted and sent only if the invitation commits.
  const stopped = await takeMailAllowance(
    tx,
    { kind: 'tenant', tenantId, senderId: actor.userId, email: input.email },
    caps,
    now,
  );
  if (stopped) return presentInvitation(row);
  await queueInvitationEmail(tx, { mailId: newId(), tenantId, invitationId: row.id, now });
  return presentInvitation(row);
}

/** The tenant's invitations (owners and admins), newest first, expired ones included until replaced. */
export async function listInvitations(db: Db, actor: Actor, tenantId: string, request: PageRequest) {
  await authorize(db, actor, tenantId, 'manageMembers');
  return readPage(request, {
    rows: (page: Page) => invitationsPage(db, tenantId, page),
    // A list the cap bounds (MAX_INVITATIONS_PER_TENANT): its count reads at most that many index entries.
    totalCount: () => countInvitationsOf(db, tenantId),
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
  tx: Transaction,
  tenantId: string,
  inviterId: string,
  role: Role | null,
): Promise<void> {
  const kept = rolesGrantableBy(role);
  if (kept.length === ROLES.length) return;
  await deleteInvitationsBeyond(tx, { tenantId, inviterId, kept });
}

/** Withdraws an invitation; only an owner may withdraw one to the owner role (as only an owner may grant it). */
export async function deleteInvitation(db: Db, actor: Actor, tenantId: string, invitationId: string): Promise<void> {
  const caller = await authorize(db, actor, tenantId, 'manageMembers');
  // Checked before any statement: an id that is not one of ours names no invitation, so nothing may be deleted.
  if (!isId(invitationId)) throw notFound('invitation');
  const roles = rolesGrantableBy(caller.role);
  if (await deleteInvitationTo(db, { id: invitationId, tenantId, roles })) return;
  if (await invitationExists(db, invitationId, tenantId)) {
    throw new ProblemError('forbidden', 'Only an owner can grant, change or remove the owner role.');
  }
  throw notFound('invitation');
}

/**
 * The caller's pending invitations, newest first, by (email, id). Its count reads the caller's invitations, at
 * most one per tenant that invited them: a list that stays short, so no kept counter is needed.
 */
export async function listMyInvitations(db: Db, actor: Actor, request: PageRequest) {
  const now = new Date();
  return readPage(request, {
    rows: (page: Page) => pendingInvitationsPage(db, actor.user.email, now, page),
    totalCount: () => countPendingInvitations(db, actor.user.email, now),
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
  const pending = await findPendingInvitation(db, invitationId, actor.user.email, now);
  if (!pending) throw noInvitation();
  const { tenantId } = pending;
  await inTransaction(db, async (tx) => {
    await lockTenantMembers(tx, tenantId);
    // Again under the lock: a withdrawal, a decline or another accept may have come first.
    const role = await takePendingInvitation(tx, { id: invitationId, email: actor.user.email, now });
    if (!role) throw noInvitation();
    const member = await insertMembership(tx, { id: newId(), tenantId, userId: actor.userId, role, createdAt: now });
    await insertWebhookEvent(tx, outboxRow('member.added', tenantId, { member: presentMember(member) }, now));
  });
  db.outbox.webhooks.signal();
  return getTenant(db, actor, tenantId);
}

/** Declines (deletes) one of the caller's pending invitations. */
export async function declineInvitation(db: Db, actor: Actor, invitationId: string): Promise<void> {
  if (!isId(invitationId)) throw noInvitation();
  if (!(await declinePendingInvitation(db, invitationId, actor.user.email, new Date()))) throw noInvitation();
}
