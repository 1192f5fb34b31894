import type { Schemas } from '../schemas';

interface UserRow {
  id: string;
  email: string;
  firstName: string;
  lastName: string;
  createdAt: Date;
}

/** The seed's "user record": how a user appears inside other resources. */
export const presentUserRecord = (user: Pick<UserRow, 'email' | 'firstName' | 'lastName'>): Schemas['UserRecord'] => ({
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

/** Emails compare case-insensitively: we store them lower-cased. */
export const normalizeEmail = (email: string): string => email.trim().toLowerCase();

/** Names are trimmed; the contract has already refused empty names and control characters. */
export const normalizeName = (name: string): string => name.trim();
