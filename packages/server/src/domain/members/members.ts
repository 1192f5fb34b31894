import type { Db } from '../../db/client';
import { isId, newId } from '../../db/ids';
import { type Actor, authorize, type Membership, requirePermission, type Role } from '../access';
import { notFound, ProblemError } from '../errors';
import { type PageRequest, pageOf, toConnection } from '../paging';
import { checkPrecondition, type Precondition, preconditionFailed } from '../preconditions';
import type { Schemas } from '../schemas';
import { isUniqueViolation } from '../unique';
import { normalizeEmail, normalizeName, presentUser } from '../users/present';

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

export async function listMembers(db: Db, actor: Actor, tenantId: string, request: PageRequest) {
  await authorize(db, actor, tenantId, 'readTenant');
  const page = pageOf(request);
  const [rows, totalCount] = await Promise.all([
    db.membership.findMany({
      where: { tenantId, ...(page.beforeId && { id: { lt: page.beforeId } }) },
      include: { user: true },
      orderBy: { id: 'desc' },
      take: page.take,
    }),
    db.membership.count({ where: { tenantId } }),
  ]);
  return toConnection(rows, page, totalCount, presentMember);
}

export async function addMember(
  db: Db,
  actor: Actor,
  tenantId: string,
  input: { email: string; role: Role; firstName?: string; lastName?: string },
) {
  const caller = await authorize(db, actor, tenantId, 'manageMembers');
  checkRoleChange(caller, undefined, input.role);
  const email = normalizeEmail(input.email);
  // Adding an email that has no user yet creates the user record.
  const user = await db.user.upsert({
    where: { email },
    create: {
      id: newId(),
      email,
      firstName: normalizeName(input.firstName ?? ''),
      lastName: normalizeName(input.lastName ?? ''),
    },
    update: {},
  });
  try {
    const member = await db.membership.create({
      data: { id: newId(), tenantId, userId: user.id, role: input.role },
      include: { user: true },
    });
    return presentMember(member);
  } catch (error) {
    if (isUniqueViolation(error)) throw new ProblemError('already_member', 'This user is already a member.');
    throw error;
  }
}

/**
 * Changes a role or removes a member, keeping at least one owner. The owner count is checked inside a
 * transaction that locks the tenant's owner rows, so two owners cannot demote each other at once.
 */
async function changeMembership(
  db: Db,
  actor: Actor,
  tenantId: string,
  userId: string,
  newRole: Role | null,
  precondition?: Precondition<Schemas['Member']>,
) {
  const caller = await authorize(db, actor, tenantId, 'manageMembers');
  if (!isId(userId)) throw notFound('member');
  return db.$transaction(async (tx) => {
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
      return null;
    }
    if (precondition) {
      // The role is all of a member that changes: write only if it is still the one If-Match was checked on.
      const { count } = await tx.membership.updateMany({ where: { id: target.id, role: target.role }, data: { role: newRole } });
      if (count === 0) throw preconditionFailed();
      return presentMember(await tx.membership.findUniqueOrThrow({ where: { id: target.id }, include: { user: true } }));
    }
    return presentMember(
      await tx.membership.update({ where: { id: target.id }, data: { role: newRole }, include: { user: true } }),
    );
  });
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
