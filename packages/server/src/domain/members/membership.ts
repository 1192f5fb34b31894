import type { Prisma } from '@works-api/prisma/client';
import type { Schemas } from '../schemas';
import { memberUser, presentMemberUser } from '../users/present';

/** What a membership is read with: its user, as a tenant sees them. */
export const withUser = { user: memberUser } as const;

/** A membership as read with its user. */
export type MemberRow = Prisma.MembershipGetPayload<{ include: typeof withUser }>;

/**
 * A member as the tenant sees them: the user's id, names and email, not when their account was created (a tenant
 * learns nothing more about a person than what they show every tenant they belong to).
 */
export const presentMember = (member: MemberRow): Schemas['Member'] => ({
  role: member.role,
  user: presentMemberUser(member.user),
  createdAt: member.createdAt.toISOString(),
});

/**
 * Every change of a tenant's members (an invitation, an acceptance, a role change, a removal) takes this lock
 * first, inside its transaction, so that each one sees the others that committed before it. `FOR NO KEY UPDATE`
 * does not block inserts that reference the tenant (works, requests), which only take a key-share lock.
 */
export async function lockTenantMembers(tx: Prisma.TransactionClient, tenantId: string): Promise<void> {
  await tx.$queryRaw`SELECT 1 FROM tenants WHERE id = ${tenantId}::uuid FOR NO KEY UPDATE`;
}
