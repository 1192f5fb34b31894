import type { Db } from '@works-api/prisma';
import type { ApiKey, User } from '@works-api/prisma/client';
import { findUser, insertUserWithKey, isId, newId } from '@works-api/prisma';
import { type HeldKey } from '@works-api/prisma';
import type { Actor } from '../access';
import { newApiKey, presentApiKey } from '../api-keys/api-keys';
import { notFound, ProblemError } from '../errors';
import type { Schemas } from '../schemas';
import { isUniqueViolation } from '../unique';
import { normalizeEmail, normalizeName, presentUser } from './present';
import { recordedWith } from '../idempotent-results';

export interface NewUser {
  email: string;
  firstName: string;
  lastName: string;
}

/**
 * Operator route: a user and their first API key, with the names the operator gives, in one statement (atomic, one
 * round trip, and no transaction to wait for). Pending invitations for the email stay invitations: the user joins
 * a tenant only by accepting one.
 */
/** A new user and their first API key (its secret shown once). */
export interface CreatedUser {
  user: Schemas['User'];
  apiKey: Schemas['CreatedApiKey'];
}

/** Creates a user with a first API key; under an Idempotency-Key (`heldKey`), they are its result, recorded with them. */
export async function createUserWithKey(db: Db, input: NewUser, heldKey?: HeldKey) {
  const userId = newId();
  const { secret, data } = newApiKey(userId, 'Default key');
  const now = new Date();
  const user: User = {
    id: userId,
    email: normalizeEmail(input.email),
    firstName: normalizeName(input.firstName),
    lastName: normalizeName(input.lastName),
    createdAt: now,
  };
  const key: ApiKey = { ...data, createdAt: now, lastUsedAt: null, revokedAt: null };
  const created: CreatedUser = { user: presentUser(user), apiKey: { ...presentApiKey(key), secret } };
  const recorded = recordedWith(db, heldKey, created);
  try {
    await insertUserWithKey(
      db,
      {
        ...{ userId: user.id, email: user.email, firstName: user.firstName, lastName: user.lastName },
        ...{ now: now.toISOString(), apiKeyId: key.id, apiKeyName: key.name, prefix: key.prefix },
        secretHash: key.secretHash,
      },
      recorded,
    );
    return created;
  } catch (error) {
    if (isUniqueViolation(error)) throw new ProblemError('email_taken', 'A user with this email already exists.');
    throw error;
  }
}

/** Operator route: a user by id (404 for any id that names no user). */
export async function getUser(db: Db, userId: string): Promise<Schemas['User']> {
  const user = isId(userId) ? await findUser(db, userId) : null;
  if (!user) throw notFound('user');
  return presentUser(user);
}

export async function getMe(db: Db, actor: Actor): Promise<Schemas['User']> {
  const user = await findUser(db, actor.userId);
  if (!user) throw notFound('user');
  return presentUser(user);
}
