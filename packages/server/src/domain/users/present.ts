import type { User } from '@works-api/prisma/client';
import type { MemberUserRow, OwnerColumns, UserRecordRow } from '@works-api/prisma';
import type { Schemas } from '../schemas';

/** How a user record (the owner of a tenant, work or request, the actor of an event) and a member's user are read. */
export { memberUser, type MemberUserRow, userRecord, type UserRecordRow } from '@works-api/prisma';

/** A statement's owner columns (statements/parts.ts), back to a user record. */
export const ownerRecord = (row: OwnerColumns): UserRecordRow => ({
  email: row.ownerEmail,
  firstName: row.ownerFirstName,
  lastName: row.ownerLastName,
});

/** The seed's "user record": how a user appears inside other resources. */
export const presentUserRecord = (user: UserRecordRow): Schemas['UserRecord'] => ({
  firstName: user.firstName,
  lastName: user.lastName,
  email: user.email,
});

export const presentUser = (user: User): Schemas['User'] => ({
  id: user.id,
  firstName: user.firstName,
  lastName: user.lastName,
  email: user.email,
  createdAt: user.createdAt.toISOString(),
});

/** A user as a tenant sees them (Member.user). */
export const presentMemberUser = (user: MemberUserRow): Schemas['MemberUser'] => ({
  id: user.id,
  firstName: user.firstName,
  lastName: user.lastName,
  email: user.email,
});

/** Emails compare case-insensitively: we store them lower-cased. */
export const normalizeEmail = (email: string): string => email.trim().toLowerCase();

/** Names are trimmed; the contract has already refused empty names and control characters. */
export const normalizeName = (name: string): string => name.trim();
