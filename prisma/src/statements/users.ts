import type { Db } from '../handle';
import type { Prisma, User } from '../generated/client';
import type { OutcomeStatement } from './idempotency';
import { type Queryable, sendStatement } from './send';

/** What a user record is read with: the owner of a tenant, work or request, the actor of a request's event. */
export const userRecord = { select: { firstName: true, lastName: true, email: true } } as const;

/** A user read through `userRecord`. */
export type UserRecordRow = Prisma.UserGetPayload<typeof userRecord>;

/** What a member's user is read with: no account creation time, nothing from outside the tenant. */
export const memberUser = { select: { id: true, email: true, firstName: true, lastName: true } } as const;

/** A user read through `memberUser`. */
export type MemberUserRow = Prisma.UserGetPayload<typeof memberUser>;

/** A user by id. */
export function findUser(db: Db, id: string): Promise<User | null> {
  return db.prisma.user.findUnique({ where: { id } });
}

/** A new user and their first API key, as `insertUserWithKey` writes them. */
export interface NewUserWithKey {
  userId: string;
  email: string;
  firstName: string;
  lastName: string;
  now: string;
  apiKeyId: string;
  apiKeyName: string;
  prefix: string;
  secretHash: string;
}

/**
 * A user and their first API key in one statement (atomic, one round trip, and no transaction to wait for), with
 * the Idempotency-Key's result (`key`, idempotency.ts). A taken email is a unique violation.
 */
export async function insertUserWithKey(db: Queryable, params: NewUserWithKey, key: OutcomeStatement): Promise<void> {
  await sendStatement(
    db,
    `WITH ${key.lockHeldKey}
       created AS (
         INSERT INTO users (id, email, first_name, last_name, created_at)
         SELECT :userId::uuid, :email, :firstName, :lastName, :now::timestamptz
         WHERE ${key.guard} RETURNING id)${key.recordResult('created')}
       INSERT INTO api_keys (id, user_id, name, prefix, secret_hash, created_at)
       SELECT :apiKeyId::uuid, id, :apiKeyName, :prefix, :secretHash, :now::timestamptz FROM created`,
    { ...params, ...key.params },
  );
}
