import type { Db } from '../../db/client';
import { newId } from '../../db/ids';
import type { Actor } from '../access';
import { newApiKey, presentApiKey } from '../api-keys/api-keys';
import { notFound, ProblemError } from '../errors';
import type { Schemas } from '../schemas';
import { isUniqueViolation } from '../unique';
import { normalizeEmail, normalizeName, presentUser } from './present';

export interface NewUser {
  email: string;
  firstName: string;
  lastName: string;
}

/** Operator route: a user and their first API key, in one transaction. */
export async function createUserWithKey(db: Db, input: NewUser) {
  const userId = newId();
  const { secret, data } = newApiKey(userId, 'Default key');
  try {
    const [user, key] = await db.$transaction([
      db.user.create({
        data: {
          id: userId,
          email: normalizeEmail(input.email),
          firstName: normalizeName(input.firstName),
          lastName: normalizeName(input.lastName),
        },
      }),
      db.apiKey.create({ data }),
    ]);
    return { user: presentUser(user), apiKey: { ...presentApiKey(key), secret } satisfies Schemas['CreatedApiKey'] };
  } catch (error) {
    if (isUniqueViolation(error)) throw new ProblemError('email_taken', 'A user with this email already exists.');
    throw error;
  }
}

export async function getMe(db: Db, actor: Actor): Promise<Schemas['User']> {
  const user = await db.user.findUnique({ where: { id: actor.userId } });
  if (!user) throw notFound('user');
  return presentUser(user);
}
