import type { Db } from '../../db/client';
import { isId, newId } from '../../db/ids';
import { signalOutboxWrite } from '../../db/outbox-signal';
import type { Actor } from '../access';
import { newApiKey, presentApiKey } from '../api-keys/api-keys';
import { notFound, ProblemError } from '../errors';
import { acceptInvitations, lockEmail, suggestedNames } from '../members/invitations';
import { presentMember } from '../members/members';
import type { Schemas } from '../schemas';
import { isUniqueViolation } from '../unique';
import { normalizeEmail, normalizeName, presentUser } from './present';

export interface NewUser {
  email: string;
  firstName: string;
  lastName: string;
}

/**
 * Operator route: a user and their first API key, in one transaction. In the same transaction every pending
 * invitation for the email (issue 23) becomes a membership with its role, each with its `member.added` event; when
 * the operator gives no names, the oldest invitation's suggestion is used.
 */
export async function createUserWithKey(db: Db, input: NewUser) {
  const userId = newId();
  const { secret, data } = newApiKey(userId, 'Default key');
  const email = normalizeEmail(input.email);
  try {
    const { user, key, joined } = await db.$transaction(async (tx) => {
      // Against an invitation of this email being written at the same moment (see lockEmail).
      await lockEmail(tx, email);
      let names = { firstName: normalizeName(input.firstName), lastName: normalizeName(input.lastName) };
      if (!names.firstName && !names.lastName) names = (await suggestedNames(tx, email)) ?? names;
      const user = await tx.user.create({ data: { id: userId, email, ...names } });
      const key = await tx.apiKey.create({ data });
      const joined = await acceptInvitations(tx, user, presentMember);
      return { user, key, joined };
    });
    if (joined > 0) signalOutboxWrite(db);
    return { user: presentUser(user), apiKey: { ...presentApiKey(key), secret } satisfies Schemas['CreatedApiKey'] };
  } catch (error) {
    if (isUniqueViolation(error)) throw new ProblemError('email_taken', 'A user with this email already exists.');
    throw error;
  }
}

/** Operator route: a user by id (404 for any id that names no user). */
export async function getUser(db: Db, userId: string): Promise<Schemas['User']> {
  const user = isId(userId) ? await db.user.findUnique({ where: { id: userId } }) : null;
  if (!user) throw notFound('user');
  return presentUser(user);
}

export async function getMe(db: Db, actor: Actor): Promise<Schemas['User']> {
  const user = await db.user.findUnique({ where: { id: actor.userId } });
  if (!user) throw notFound('user');
  return presentUser(user);
}
