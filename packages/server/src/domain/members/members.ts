import type { Db } from '../../db/client';
import { countMembersOf } from '../../db/counts';
import { Prisma } from '../../db/generated/client';
import { isId, newId } from '../../db/ids';
import { signalOutboxWrite } from '../../db/outbox-signal';
import { type Actor, authorize, type Membership, requirePermission, type Role } from '../access';
import { notFound, ProblemError } from '../errors';
import { newestFirst, type Page, type PageRequest, readPage } from '../paging';
import { checkPrecondition, type Precondition, preconditionFailed } from '../preconditions';
import type { Schemas } from '../schemas';
import { isUniqueViolation } from '../unique';
import { normalizeEmail, normalizeName, presentUser } from '../users/present';
import { outboxRow } from '../webhooks/events';

interface MemberRow {
  role: Role;
  createdAt: Date;
  user: { id: string; email: string; firstName: string; lastName: string; createdAt: Date };
}

export const presentMember = (member: MemberRow): Schemas['Member'] => ({
  role: member.role,
  user: presentUser(member.user),
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
  const [row] = await tx.$queryRaw<Array<{ role: Role }>>`
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
      return db.membership.findMany({ where: { tenantId, ...where }, include: { user: true }, ...window });
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
    include: { user: true },
  });
  if (!member) throw notFound('member');
  return presentMember(member);
}

export async function addMember(
  db: Db,
  actor: Actor,
  tenantId: string,
  input: { email: string; role: Role; firstName?: string; lastName?: string },
) {
  checkRoleChange(await authorize(db, actor, tenantId, 'manageMembers'), undefined, input.role);
  try {
    // The user (when new), the membership and its `member.added` outbox row commit together.
    const member = await db.$transaction(async (tx) => {
      checkRoleChange(await callerInTransaction(tx, actor, tenantId), undefined, input.role);
      // Adding an email that has no user yet creates the user record (and joins one a concurrent add creates).
      const user = await userWithEmail(tx, input);
      const created = presentMember(
        await tx.membership.create({
          data: { id: newId(), tenantId, userId: user.id, role: input.role },
          include: { user: true },
        }),
      );
      await tx.webhookEvent.create({
        data: outboxRow('member.added', tenantId, { member: created }, new Date(created.createdAt)),
      });
      return created;
    });
    signalOutboxWrite(db);
    return member;
  } catch (error) {
    if (isUniqueViolation(error)) throw new ProblemError('already_member', 'This user is already a member.');
    throw error;
  }
}

/**
 * The user with this email, created (with the given names) when there is none. Atomic: of two requests adding the
 * same new email at once, one inserts and the other finds that row, rather than failing on the unique email (as
 * Prisma's upsert, a read then an insert, did). ON CONFLICT DO NOTHING waits for a concurrent insert of the email
 * to commit; the SELECT after it, a statement of its own, then sees that row.
 */
async function userWithEmail(
  db: Prisma.TransactionClient,
  input: { email: string; firstName?: string; lastName?: string },
) {
  const email = normalizeEmail(input.email);
  const columns = Prisma.sql`id, email, first_name AS "firstName", last_name AS "lastName", created_at AS "createdAt"`;
  const [created] = await db.$queryRaw<UserRow[]>`
    INSERT INTO users (id, email, first_name, last_name)
    VALUES (${newId()}::uuid, ${email}, ${normalizeName(input.firstName ?? '')}, ${normalizeName(input.lastName ?? '')})
    ON CONFLICT (email) DO NOTHING
    RETURNING ${columns}`;
  if (created) return created;
  const [existing] = await db.$queryRaw<UserRow[]>`SELECT ${columns} FROM users WHERE email = ${email}`;
  if (!existing) throw new Error(`the user ${email} conflicted on insert but cannot be read`);
  return existing;
}

type UserRow = MemberRow['user'];

/**
 * Changes a role or removes a member, keeping at least one owner. The caller's role and the owner count are
 * checked inside the transaction, under the tenant's membership lock (and the owner rows' locks), so two owners
 * cannot demote each other at once and a caller demoted meanwhile cannot act on their old role.
 */
async function changeMembership(
  db: Db,
  actor: Actor,
  tenantId: string,
  userId: string,
  newRole: Role | null,
  precondition?: Precondition<Schemas['Member']>,
) {
  await authorize(db, actor, tenantId, 'manageMembers');
  if (!isId(userId)) throw notFound('member');
  const result = await db.$transaction(async (tx) => {
    const caller = await callerInTransaction(tx, actor, tenantId);
    const target = await tx.membership.findUnique({
      where: { tenantId_userId: { tenantId, userId } },
      include: { user: true },
    });
    if (!target) throw notFound('member');
    checkPrecondition(precondition, () => presentMember(target));
    checkRoleChange(caller, target.role, newRole ?? undefined);
    if (target.role === 'owner' && newRole !== 'owner') {
      const owners = await tx.$queryRaw<Array<{ user_id: string }>>`
        SELECT user_id FROM memberships WHERE tenant_id = ${tenantId}::uuid AND role = 'owner' FOR UPDATE`;
      if (owners.length <= 1) throw lastOwner();
    }
    if (newRole === null) {
      await tx.membership.delete({ where: { id: target.id } });
      // The member as it was, so receivers know who left and with which role.
      await tx.webhookEvent.create({
        data: outboxRow('member.removed', tenantId, { member: presentMember(target) }, new Date()),
      });
      return null;
    }
    if (precondition) {
      // The role is all of a member that changes: write only if it is still the one If-Match was checked on.
      const { count } = await tx.membership.updateMany({
        where: { id: target.id, role: target.role },
        data: { role: newRole },
      });
      if (count === 0) throw preconditionFailed();
      return presentMember(
        await tx.membership.findUniqueOrThrow({ where: { id: target.id }, include: { user: true } }),
      );
    }
    return presentMember(
      await tx.membership.update({ where: { id: target.id }, data: { role: newRole }, include: { user: true } }),
    );
  });
  if (result === null) signalOutboxWrite(db);
  return result;
}

export async function updateMember(
  db: Db,
  actor: Actor,
  tenantId: string,
  userId: string,
  role: Role,
  precondition?: Precondition<Schemas['Member']>,
) {
  return (await changeMembership(db, actor, tenantId, userId, role, precondition))!;
}

export async function removeMember(db: Db, actor: Actor, tenantId: string, userId: string): Promise<void> {
  await changeMembership(db, actor, tenantId, userId, null);
}
