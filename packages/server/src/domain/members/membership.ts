import type { MemberRow } from '@works-api/prisma';
import type { Schemas } from '../schemas';
import { presentMemberUser } from '../users/present';

/**
 * A member as the tenant sees them: the user's id, names and email, not when their account was created (a tenant
 * learns nothing more about a person than what they show every tenant they belong to).
 */
export const presentMember = (member: MemberRow): Schemas['Member'] => ({
  role: member.role,
  user: presentMemberUser(member.user),
  createdAt: member.createdAt.toISOString(),
});
