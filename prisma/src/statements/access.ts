import type { Db } from '../handle';
import type { Membership } from '../generated/client';
import { type Queryable, sendStatement } from './send';

/**
 * The caller's role in a tenant (undefined: not a member), what every tenant-scoped operation reads first, and a
 * member change again inside its transaction. Prepared: nearly every request sends it, by key.
 */
const FIND_MEMBER_ROLE =
  'SELECT role::text AS role FROM memberships WHERE tenant_id = :tenantId::uuid AND user_id = :userId::uuid';

export async function findMemberRole(
  db: Queryable,
  tenantId: string,
  userId: string,
): Promise<Pick<Membership, 'role'> | undefined> {
  const [membership] = await sendStatement<Pick<Membership, 'role'>>(
    db,
    FIND_MEMBER_ROLE,
    { tenantId, userId },
    { prepared: true },
  );
  return membership;
}

/** The user's roles in those of `tenantIds` they are a member of (one index read each). */
export function memberRolesAmong(
  db: Db,
  userId: string,
  tenantIds: readonly string[],
): Promise<Array<Pick<Membership, 'tenantId' | 'role'>>> {
  return db.prisma.membership.findMany({
    where: { userId, tenantId: { in: [...tenantIds] } },
    select: { tenantId: true, role: true },
  });
}
