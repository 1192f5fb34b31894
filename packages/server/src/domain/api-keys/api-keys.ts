import type { Db } from '@works-api/prisma';
import { countApiKeysOf } from '@works-api/prisma';
import type { ApiKey, User } from '@works-api/prisma/client';
import { isId, newId } from '@works-api/prisma';
import { type KeyOutcome } from '@works-api/prisma';
import { preparedQuery } from '@works-api/prisma';
import type { Actor } from '../access';
import { notFound, ProblemError } from '../errors';
import { apiKeyLimitReached, createWithinCap } from '../limits';
import { newestFirst, type Page, type PageRequest, readPage } from '../paging';
import type { Schemas } from '../schemas';
import { normalizeName } from '../users/present';
import { generateKey, keyMatches, prefixOf } from './secrets';

export const presentApiKey = (key: ApiKey): Schemas['ApiKey'] => ({
  id: key.id,
  name: key.name,
  prefix: key.prefix,
  createdAt: key.createdAt.toISOString(),
  lastUsedAt: key.lastUsedAt?.toISOString() ?? null,
  revokedAt: key.revokedAt?.toISOString() ?? null,
});

/** Data for a new key row, and the secret to show once. */
export function newApiKey(userId: string, name: string) {
  const { secret, prefix, secretHash } = generateKey();
  return { secret, data: { id: newId(), userId, name: normalizeName(name), prefix, secretHash } };
}

// Writing lastUsedAt on every request would turn every read into a write; a minute's precision is enough.
const LAST_USED_PRECISION_MS = 60_000;

/** The key's row, with its user's public fields. */
type KeyForAuth = Pick<ApiKey, 'id' | 'userId' | 'secretHash' | 'revokedAt' | 'lastUsedAt'> &
  Pick<User, 'email' | 'firstName' | 'lastName'>;

/** The caller behind a presented API key (undefined when none was presented), or 401. */
export async function authenticate(db: Db, presented: string | undefined, now = new Date()): Promise<Actor> {
  const prefix = presented === undefined ? undefined : prefixOf(presented);
  if (presented === undefined || prefix === undefined) throw unauthenticated('A valid API key is required.');
  // Every request runs this: a plain statement, prepared (see prisma/src/plain-statement.ts). The owner's fields come
  // along, so that what the caller creates can be answered without reading the user back.
  const [key] = await preparedQuery<KeyForAuth>(
    db,
    `SELECT k.id, k.user_id AS "userId", k.secret_hash AS "secretHash", k.revoked_at AS "revokedAt",
            k.last_used_at AS "lastUsedAt", u.email, u.first_name AS "firstName", u.last_name AS "lastName"
     FROM api_keys k JOIN users u ON u.id = k.user_id WHERE k.prefix = :prefix`,
    { prefix },
  );
  if (!key || !keyMatches(presented, key.secretHash)) throw unauthenticated('This API key is not valid.');
  if (key.revokedAt) throw unauthenticated('This API key has been revoked.');
  if (!key.lastUsedAt || now.getTime() - key.lastUsedAt.getTime() > LAST_USED_PRECISION_MS) {
    await db.prisma.apiKey.update({ where: { id: key.id }, data: { lastUsedAt: now } });
  }
  const { email, firstName, lastName } = key;
  return { userId: key.userId, via: 'apiKey', credentialId: key.id, user: { email, firstName, lastName } };
}

export const unauthenticated = (detail: string): ProblemError => new ProblemError('unauthenticated', detail);

export async function listApiKeys(db: Db, actor: Actor, request: PageRequest) {
  return readPage(request, {
    rows: (page: Page) => {
      const { where, ...window } = newestFirst(page, 'id');
      return db.prisma.apiKey.findMany({ where: { userId: actor.userId, ...where }, ...window });
    },
    totalCount: () => countApiKeysOf(db, actor.userId),
    present: presentApiKey,
  });
}

/** A new key for the caller, while they have fewer than `maxActiveKeys` active (not revoked) keys. */
export async function createApiKey(
  db: Db,
  actor: Actor,
  name: string,
  maxActiveKeys: number,
  outcome?: KeyOutcome<Schemas['CreatedApiKey']>,
): Promise<Schemas['CreatedApiKey']> {
  const { secret, data } = newApiKey(actor.userId, name);
  const key = await createWithinCap(
    db,
    {
      lock: { table: 'users', id: actor.userId },
      // Served by the partial index api_keys_active_user_id_idx: revoked keys are never read.
      counted: 'FROM api_keys WHERE user_id = :ownerId::uuid AND revoked_at IS NULL',
      cap: maxActiveKeys,
      refusal: apiKeyLimitReached,
    },
    async (tx) => {
      const created = { ...presentApiKey(await tx.apiKey.create({ data })), secret };
      await outcome?.recordIn(tx, created);
      return created;
    },
  );
  return key;
}

export async function revokeApiKey(db: Db, actor: Actor, apiKeyId: string, now = new Date()) {
  if (!isId(apiKeyId)) throw notFound('API key');
  // Only the first revocation sets revokedAt, so revoking twice returns the same key.
  await db.prisma.apiKey.updateMany({
    where: { id: apiKeyId, userId: actor.userId, revokedAt: null },
    data: { revokedAt: now },
  });
  const key = await db.prisma.apiKey.findFirst({ where: { id: apiKeyId, userId: actor.userId } });
  if (!key) throw notFound('API key');
  return presentApiKey(key);
}
