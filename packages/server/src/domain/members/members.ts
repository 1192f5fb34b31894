import type { Db } from '../../db/client';
import { countMembersOf } from '../../db/counts';
import type { Membership as MembershipRow, Prisma } from '../../db/generated/client';
import { isId, newId } from '../../db/ids';
import { signalOutboxWrite } from '../../db/outbox-signal';
import { signalMailQueued } from '../../mail/outbox';
import { type Actor, authorize, type Membership, requirePermission, type Role } from '../access';
import { notFound, ProblemError } from '../errors';
import { newestFirst, type Page, type PageRequest, readPage } from '../paging';
import { checkPrecondition, type Precondition, preconditionFailed } from '../preconditions';
import type { Schemas } from '../schemas';
import { isUniqueViolation } from '../unique';
import { memberUser, normalizeEmail, normalizeName, presentMemberUser } from '../users/present';
import { DEFAULT_LIMITS } from '../limits';
import { outboxRow } from '../webhooks/events';
import { createInvitation, lockEmail } from './invitations';

const withUser = { user: memberUser } as const;

/** A membership as read with its user. */
export type MemberRow = Prisma.MembershipGetPayload<{ include: typeof withUser }>;

/**
 * A member as the tenant sees them: the user's id, names and email, not when their account was created (issue
 * 23: any owner can add a known email, and must learn nothing more about that person than what they gave).
 */
export const presentMember = (member: MemberRow): Schemas['Member'] => ({
  role: member.role,
  user: presentMemberUser(member.user),
  createdAt: member.createdAt.toISOString(),
});

const lastOwner = (): ProblemError => new ProblemError('last_owner', 'A tenant keeps at least one owner.');

/** On top of `manageMembers`: granting, changing or taking away the owner role needs `manageOwners`. */
function checkRoleChange(caller: Membership, from: Role | undefined, to: Role | undefined): void {
  if (from === 'owner' || to === 'owner') {
    requirePermission(caller, 'manageOwners', 'Only an owner can grant, change or remove the owner role.');
  }
}

/**
 * The caller's membership as it is now, inside the change's transaction, after taking the tenant's membership
 * lock: every member change of a tenant takes it first, so a concurrent change of the caller's own role either
 * committed before (and is seen here) or waits until this change commits. The check `authorize` made before the
 * transaction cannot be trusted for that: the caller may have been demoted since. `FOR NO KEY UPDATE` does not
 * block inserts that reference the tenant (works, requests), which only take a key-share lock.
 */
async function callerInTransaction(tx: Prisma.TransactionClient, actor: Actor, tenantId: string): Promise<Membership> {
  await tx.$queryRaw`SELECT 1 FROM tenants WHERE id = ${tenantId}::uuid FOR NO KEY UPDATE`;
  const [row] = await tx.$queryRaw<Array<Pick<MembershipRow, 'role'>>>`
    SELECT role::text AS role FROM memberships WHERE tenant_id = ${tenantId}::uuid AND user_id = ${actor.userId}::uuid`;
  if (!row) throw notFound('tenant');
  const caller = { tenantId, role: row.role };
  requirePermission(caller, 'manageMembers');
  return caller;
}

export async function listMembers(db: Db, actor: Actor, tenantId: string, request: PageRequest) {
  await authorize(db, actor, tenantId, 'readTenant');
  return readPage(request, {
    rows: (page: Page) => {
      const { where, ...window } = newestFirst(page, 'id');
      return db.membership.findMany({ where: { tenantId, ...where }, include: withUser, ...window });
    },
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
  const member = await db.membership.findUnique({
    where: { tenantId_userId: { tenantId, userId } },
    include: withUser,
  });
  if (!member) throw notFound('member');
  return presentMember(member);
}

export type AddMemberResult = { member: Schemas['Member'] } | { invitation: Schemas['Invitation'] };

/**
 * Adds a member by email. An existing user becomes a member at once; an email that no user has becomes a pending
 * invitation (issue 23): no user row, nothing outside the tenant, and an email to the address. Both in one
 * transaction with what they write (the `member.added` outbox row, or the invitation's email).
 */
export async function addMember(
  db: Db,
  actor: Actor,
  tenantId: string,
  input: { email: string; role: Role; firstName?: string; lastName?: string },
  maxInvitations: number = DEFAULT_LIMITS.invitationsPerTenant,
): Promise<AddMemberResult> {
  checkRoleChange(await authorize(db, actor, tenantId, 'manageMembers'), undefined, input.role);
  const email = normalizeEmail(input.email);
  try {
    const result = await db.$transaction(async (tx): Promise<AddMemberResult> => {
      checkRoleChange(await callerInTransaction(tx, actor, tenantId), undefined, input.role);
      // Against the operator creating this user at the same moment (see lockEmail).
      await lockEmail(tx, email);
      const user = await tx.user.findUnique({ where: { email } });
      if (!user) {
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
          maxInvitations,
        );
        return { invitation };
      }
      const member = presentMember(
        await tx.membership.create({
          data: { id: newId(), tenantId, userId: user.id, role: input.role },
          include: withUser,
        }),
      );
      await tx.webhookEvent.create({
        data: outboxRow('member.added', tenantId, { member }, new Date(member.createdAt)),
      });
      return { member };
    });
    if ('member' in result) signalOutboxWrite(db);
    else signalMailQueued(db);
    return result;
  } catch (error) {
    if (isUniqueViolation(error)) throw new ProblemError('already_member', 'This user is already a member.');
    throw error;
  }
}

/**
 * The member a role change or removal acts on, after every check, inside the change's transaction: the caller's
 * role and the owner count are read under the tenant's membership lock (and the owner rows' locks), so two owners
 * cannot demote each other at once and a caller demoted meanwhile cannot act on their old role. `newRole` is the
 * role the member will have, or `null` for a removal.
 */
async function memberToChange(
  tx: Prisma.TransactionClient,
  actor: Actor,
  tenantId: string,
  userId: string,
  newRole: Role | null,
  precondition?: Precondition<Schemas['Member']>,
) {
  const caller = await callerInTransaction(tx, actor, tenantId);
  const target = await tx.membership.findUnique({
    where: { tenantId_userId: { tenantId, userId } },
    include: withUser,
  });
  if (!target) throw notFound('member');
  checkPrecondition(precondition, () => presentMember(target));
  checkRoleChange(caller, target.role, newRole ?? undefined);
  if (target.role === 'owner' && newRole !== 'owner') {
    const owners = await tx.$queryRaw<Array<{ user_id: string }>>`
      SELECT user_id FROM memberships WHERE tenant_id = ${tenantId}::uuid AND role = 'owner' FOR UPDATE`;
    if (owners.length <= 1) throw lastOwner();
  }
  return target;
}

/** Changes a member's role, keeping at least one owner; with `If-Match`, only if the member is still as read. */
export async function updateMember(
  db: Db,
  actor: Actor,
  tenantId: string,
  userId: string,
  role: Role,
  precondition?: Precondition<Schemas['Member']>,
): Promise<Schemas['Member']> {
  await authorize(db, actor, tenantId, 'manageMembers');
  if (!isId(userId)) throw notFound('member');
  return db.$transaction(async (tx) => {
    const target = await memberToChange(tx, actor, tenantId, userId, role, precondition);
    if (precondition) {
      // The role is all of a member that changes: write only if it is still the one If-Match was checked on.
      const { count } = await tx.membership.updateMany({
        where: { id: target.id, role: target.role },
        data: { role },
      });
      if (count === 0) throw preconditionFailed();
      return presentMember(await tx.membership.findUniqueOrThrow({ where: { id: target.id }, include: withUser }));
    }
    return presentMember(await tx.membership.update({ where: { id: target.id }, data: { role }, include: withUser }));
  });
}

/** Removes a member, keeping at least one owner, and writes its `member.removed` event in the same transaction. */
export async function removeMember(db: Db, actor: Actor, tenantId: string, userId: string): Promise<void> {
  await authorize(db, actor, tenantId, 'manageMembers');
  if (!isId(userId)) throw notFound('member');
  await db.$transaction(async (tx) => {
    const target = await memberToChange(tx, actor, tenantId, userId, null);
    await tx.membership.delete({ where: { id: target.id } });
    // The member as it was, so receivers know who left and with which role.
    await tx.webhookEvent.create({
      data: outboxRow('member.removed', tenantId, { member: presentMember(target) }, new Date()),
    });
  });
  signalOutboxWrite(db);
}
