import type { Prisma } from '../../db/generated/client';
import type { Schemas } from '../schemas';

interface UserRow {
  id: string;
  email: string;
  firstName: string;
  lastName: string;
  createdAt: Date;
}

/** What a user record is read with: the owner of a tenant, work or request, the actor of a request's event. */
export const userRecord = { select: { firstName: true, lastName: true, email: true } } as const;

/** A user read through `userRecord`. */
export type UserRecordRow = Prisma.UserGetPayload<typeof userRecord>;

/** The seed's "user record": how a user appears inside other resources. */
export const presentUserRecord = (user: UserRecordRow): Schemas['UserRecord'] => ({
  firstName: user.firstName,
  lastName: user.lastName,
  email: user.email,
});

export const presentUser = (user: UserRow): Schemas['User'] => ({
  id: user.id,
  firstName: user.firstName,
  lastName: user.lastName,
  email: user.email,
  createdAt: user.createdAt.toISOString(),
});

/** A user as a tenant sees them (Member.user): no account creation time, nothing from outside the tenant. */
export const presentMemberUser = (
  user: Pick<UserRow, 'id' | 'email' | 'firstName' | 'lastName'>,
): Schemas['MemberUser'] => ({
  id: user.id,
  firstName: user.firstName,
  lastName: user.lastName,
  email: user.email,
});

/** Emails compare case-insensitively: we store them lower-cased. */
export const normalizeEmail = (email: string): string => email.trim().toLowerCase();

/** Names are trimmed; the contract has already refused empty names and control characters. */
export const normalizeName = (name: string): string => name.trim();
