import type { Db, Transaction } from '@works-api/prisma';
import {
  countMembersOf,
  deleteMembership,
  findMember,
  findMemberRole,
  insertWebhookEvent,
  inTransaction,
  isId,
  isMemberEmail,
  lockTenantMembers,
  lockTenantOwners,
  membersPage,
  updateMemberRole,
} from '@works-api/prisma';
import type { HeldKey } from '@works-api/prisma';
import {
  type Actor,
  authorize,
  type Membership,
  type Permission,
  requirePermission,
  type Role,
  roleAtLeast,
} from '../access';
import { notFound, ProblemError } from '../errors';
import { DEFAULT_LIMITS, type Limits } from '../limits';
import { type MailCaps, mailCapRefusal } from '../../mail/caps';
import { type Page, type PageRequest, readPage } from '../paging';
import { checkPrecondition, type Precondition } from '../preconditions';
import type { Schemas } from '../schemas';
import { normalizeEmail, normalizeName } from '../users/present';
import { outboxRow } from '../../webhooks/events';
import { createInvitation, withdrawInvitationsBeyond } from './invitations';
import { presentMember } from './membership';
import { recordIn } from '../idempotent-results';

export { presentMember } from './membership';

const lastOwner = (): ProblemError => new ProblemError('last_owner', 'A tenant keeps at least one owner.');

/** On top of `manageMembers`: granting, changing or taking away the owner role needs `manageOwners`. */
function checkRoleChange(caller: Membership, from: Role | undefined, to: Role | undefined): void {
  if (from === 'owner' || to === 'owner') {
    requirePermission(caller, 'manageOwners', 'Only an owner can grant, change or remove the owner role.');
  }
}

/**
 * The caller's membership as it is now, inside the change's transaction, after taking the tenant's membership
 * lock (lockTenantMembers): a concurrent change of the caller's own role either committed before (and is seen
 * here) or waits until this change commits. The check `authorize` made before the transaction cannot be trusted
 * for that: the caller may have been demoted, or removed, since.
 */
async function callerInTransaction(
  tx: Transaction,
  actor: Actor,
  tenantId: string,
  permission: Permission = 'manageMembers',
): Promise<Membership> {
  await lockTenantMembers(tx, tenantId);
  const row = await findMemberRole(tx, tenantId, actor.userId);
  if (!row) throw notFound('tenant');
  const caller = { tenantId, role: row.role };
  requirePermission(caller, permission);
  return caller;
}

export async function listMembers(db: Db, actor: Actor, tenantId: string, request: PageRequest) {
  await authorize(db, actor, tenantId, 'readTenant');
  return readPage(request, {
    rows: (page: Page) => membersPage(db, tenantId, page),
    totalCount: () => countMembersOf(db, tenantId),
    present: presentMember,
  });
}

/**
 * One member, presented exactly as `updateMember` presents (and checks `If-Match` against) it, so the ETag of
 * this read is the one a role change takes. Anyone who may list the members may read one.
 */
export async function getMember(db: Db, actor: Actor, tenantId: string, userId: string) {
  await authorize(db, actor, tenantId, 'readTenant');
  // An id we never issue names no member; it must not reach the uuid column either.
  if (!isId(userId)) throw notFound('member');
  const member = await findMember(db, tenantId, userId);
  if (!member) throw notFound('member');
  return presentMember(member);
}

/**
 * Adds a member by email, which only ever invites them (membership by consent): the same answer, the same
 * statements, whether or not an account has the email. Refused for the email of a member (which the caller can
 * read in the members list anyway) and for an email already invited.
 */
export async function addMember(
  db: Db,
  actor: Actor,
  tenantId: string,
  input: { email: string; role: Role; firstName?: string; lastName?: string },
  limits: Pick<Limits, 'invitationsPerTenant' | 'invitationTtlMs'> & MailCaps = DEFAULT_LIMITS,
  heldKey?: HeldKey,
): Promise<Schemas['Invitation']> {
  checkRoleChange(await authorize(db, actor, tenantId, 'manageMembers'), undefined, input.role);
  const email = normalizeEmail(input.email);
  const now = new Date();
  const invitation = await inTransaction(db, async (tx) => {
    checkRoleChange(await callerInTransaction(tx, actor, tenantId), undefined, input.role);
    if (await isMemberEmail(tx, tenantId, email))
      throw new ProblemError('already_member', 'This email is already a member of the tenant.');
    const invitation = await createInvitation(
      tx,
      actor,
      tenantId,
      {
        email,
        role: input.role,
        firstName: normalizeName(input.firstName ?? ''),
        lastName: normalizeName(input.lastName ?? ''),
      },
      { cap: limits.invitationsPerTenant, ttlMs: limits.invitationTtlMs, caps: limits },
      now,
    );
    await recordIn(db, tx, heldKey, invitation);
    return invitation;
  }).catch((error: unknown) => {
    throw mailCapRefusal(error, limits, now) ?? error;
  });
  db.outbox.mail.signal();
  return invitation;
}

/**
 * The member a role change or removal acts on, after every check, inside the change's transaction: the caller's
 * role and the owner count are read under the tenant's membership lock (and the owner rows' locks), so two owners
 * cannot demote each other at once and a caller demoted meanwhile cannot act on their old role. `newRole` is the
 * role the member will have, or `null` for a removal. Leaving (a removal of oneself) needs only membership.
 */
async function memberToChange(
  tx: Transaction,
  actor: Actor,
  { tenantId, userId, newRole, precondition }: MemberRef & { newRole: Role | null; precondition?: MemberPrecondition },
) {
  const leaving = newRole === null && userId === actor.userId;
  const caller = await callerInTransaction(tx, actor, tenantId, leaving ? 'readTenant' : 'manageMembers');
  const target = await findMember(tx, tenantId, userId);
  if (!target) throw notFound('member');
  checkPrecondition(precondition, () => presentMember(target));
  if (!leaving) checkRoleChange(caller, target.role, newRole ?? undefined);
  if (target.role === 'owner' && newRole !== 'owner') {
    const owners = await lockTenantOwners(tx, tenantId);
    if (owners.length <= 1) throw lastOwner();
  }
  return target;
}

/**
 * Changes a member's role, keeping at least one owner; with `If-Match`, only if the member is still as read. A
 * change writes its `member.role_changed` event in the same transaction, and a demotion withdraws the member's
 * invitations its new role could not send; the role the member already has changes nothing and writes none.
 */
/** A member of a tenant, by the tenant's id and the member's user id. */
export interface MemberRef {
  tenantId: string;
  userId: string;
}

type MemberPrecondition = Precondition<Schemas['Member']> | undefined;

export async function updateMember(
  db: Db,
  actor: Actor,
  { tenantId, userId, role, precondition }: MemberRef & { role: Role; precondition?: MemberPrecondition },
): Promise<Schemas['Member']> {
  await authorize(db, actor, tenantId, 'manageMembers');
  if (!isId(userId)) throw notFound('member');
  const { member, changed } = await inTransaction(db, async (tx) => {
    const target = await memberToChange(tx, actor, { tenantId, userId, newRole: role, precondition });
    if (target.role === role) return { member: presentMember(target), changed: false };
    // Every member change holds the tenant's lock: the role is still the one read (and If-Match checked on).
    const member = presentMember(await updateMemberRole(tx, target.id, role));
    if (!roleAtLeast(role, target.role)) await withdrawInvitationsBeyond(tx, tenantId, userId, role);
    await insertWebhookEvent(
      tx,
      outboxRow('member.role_changed', tenantId, { member, previousRole: target.role }, new Date()),
    );
    return { member, changed: true };
  });
  if (changed) db.outbox.webhooks.signal();
  return member;
}

/**
 * Removes a member, or the caller themselves (leaving, whatever their role), keeping at least one owner; writes its
 * `member.removed` event and withdraws the invitations they sent, in the same transaction.
 */
export async function removeMember(db: Db, actor: Actor, tenantId: string, userId: string): Promise<void> {
  await authorize(db, actor, tenantId, userId === actor.userId ? 'readTenant' : 'manageMembers');
  if (!isId(userId)) throw notFound('member');
  await inTransaction(db, async (tx) => {
    const target = await memberToChange(tx, actor, { tenantId, userId, newRole: null });
    await deleteMembership(tx, target.id);
    await withdrawInvitationsBeyond(tx, tenantId, userId, null);
    // The member as it was, so receivers know who left and with which role.
    await insertWebhookEvent(tx, outboxRow('member.removed', tenantId, { member: presentMember(target) }, new Date()));
  });
  db.outbox.webhooks.signal();
}
