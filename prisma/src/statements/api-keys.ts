import type { Db } from '../handle';
import type { ApiKey, Prisma, User } from '../generated/client';
import { newestFirst, type PageWindow } from './pages';
import { type Queryable, sendStatement } from './send';

/**
 * The API-key statements: the two on the request path, the lookup (every request) and the last-used touch (at most
 * once a minute per key), both prepared (driver.ts); the checks of a new key's restrictions; and the key list,
 * creation and revocation.
 */

/** A presented key's row, with its user's public fields. `tenantIds` and `scopes` are empty when unrestricted. */
export type ApiKeyForAuth = Pick<
  ApiKey,
  'id' | 'userId' | 'secretHash' | 'revokedAt' | 'lastUsedAt' | 'expiresAt' | 'tenantIds' | 'scopes'
> &
  Pick<User, 'email' | 'firstName' | 'lastName'>;

/**
 * The one statement of authentication: the key by its unique prefix (one index read) joined to its user by primary
 * key. O(1) whatever the data; the key's tenants and scopes (at most 100 and 20) come along.
 */
const FIND_API_KEY_FOR_AUTH = `SELECT k.id, k.user_id AS "userId", k.secret_hash AS "secretHash", k.revoked_at AS "revokedAt",
        k.last_used_at AS "lastUsedAt", k.expires_at AS "expiresAt",
        coalesce(k.tenant_ids, '{}')::text[] AS "tenantIds", coalesce(k.scopes, '{}') AS "scopes",
        u.email, u.first_name AS "firstName", u.last_name AS "lastName"
 FROM api_keys k JOIN users u ON u.id = k.user_id WHERE k.prefix = :prefix`;

export async function findApiKeyForAuth(db: Queryable, prefix: string): Promise<ApiKeyForAuth | undefined> {
  const [key] = await sendStatement<ApiKeyForAuth>(db, FIND_API_KEY_FOR_AUTH, { prefix }, { prepared: true });
  return key;
}

/**
 * Records that the key was used in `minute` (a time truncated to the minute), unless it already says so or later:
 * callers send it only when the minute they read differs, and the condition makes concurrent requests (and other
 * processes) write the row once per minute at most.
 */
const TOUCH_API_KEY = `UPDATE api_keys SET last_used_at = :minute::timestamptz
 WHERE id = :id::uuid AND (last_used_at IS NULL OR last_used_at < :minute::timestamptz)`;

export async function touchApiKeyLastUsed(db: Queryable, id: string, minute: Date): Promise<void> {
  await sendStatement(db, TOUCH_API_KEY, { id, minute: minute.toISOString() }, { prepared: true });
}

/**
 * Whether the user holds one of `roles` in one of `tenantIds` (null: in any tenant of theirs): what a new restricted
 * key may ask for. Stops at the first such membership (by `(user_id, tenant_id)`): with a list, at most 100 index
 * reads; without one, a user holding the role somewhere is found at once, and only a user who holds it nowhere is
 * read through (once per key creation, never on a request).
 */
// Two texts rather than one with `:tenantIds IS NULL OR ...`, and a LIMIT 1 in (user_id, tenant_id) order rather
// than EXISTS: PostgreSQL's generic plans for those read every membership (a sequential scan, statement-plans test);
// these walk the (user_id, tenant_id) index from the user's first membership and stop at the first that holds.
// Not prepared: their generic plans read every membership of the user and sorted them (2,003 rows for the data
// set's heavy user, statement-plans.test.ts checks generic plans); a plan for the values walks and stops.
const HOLDS_ROLE_IN_ANY = `SELECT count(*) > 0 AS "holds" FROM (SELECT 1 FROM memberships WHERE user_id = :userId::uuid
               AND role::text = ANY(:roles::text[]) ORDER BY tenant_id LIMIT 1) found`;
const HOLDS_ROLE_AMONG = `SELECT count(*) > 0 AS "holds" FROM (SELECT 1 FROM memberships WHERE user_id = :userId::uuid
               AND tenant_id = ANY(:tenantIds::uuid[]) AND role::text = ANY(:roles::text[]) ORDER BY tenant_id LIMIT 1) found`;

export async function holdsRoleAmongTenants(
  db: Queryable,
  userId: string,
  tenantIds: readonly string[] | null,
  roles: readonly string[],
): Promise<boolean> {
  const [row] =
    tenantIds === null
      ? await sendStatement<{ holds: boolean }>(db, HOLDS_ROLE_IN_ANY, { userId, roles })
      : await sendStatement<{ holds: boolean }>(db, HOLDS_ROLE_AMONG, { userId, tenantIds, roles });
  return row?.holds === true;
}

/** Which of `tenantIds` the user is a member of (at most 100 ids, one index read each). */
const MEMBER_TENANTS_AMONG = `SELECT tenant_id::text AS "tenantId" FROM memberships
 WHERE user_id = :userId::uuid AND tenant_id = ANY(:tenantIds::uuid[])`;

export async function memberTenantsAmong(
  db: Queryable,
  userId: string,
  tenantIds: readonly string[],
): Promise<string[]> {
  // Not prepared: its generic plan read every membership of the user and filtered the ids (2,003 rows for the data
  // set's heavy user, statement-plans.test.ts), where a plan for the ids reads one index entry each.
  const rows = await sendStatement<{ tenantId: string }>(db, MEMBER_TENANTS_AMONG, { userId, tenantIds });
  return rows.map((row) => row.tenantId);
}

/** A page of a user's API keys, newest first, by (user_id, id). */
export function apiKeysPage(db: Db, userId: string, page: PageWindow): Promise<ApiKey[]> {
  const { where, ...window } = newestFirst(page, 'id');
  return db.prisma.apiKey.findMany({ where: { userId, ...where }, ...window });
}

/** A new key's row (inside the transaction that counted the user's keys under their lock: limits.ts). */
export function insertApiKey(tx: Prisma.TransactionClient, data: Prisma.ApiKeyUncheckedCreateInput): Promise<ApiKey> {
  return tx.apiKey.create({ data });
}

/** Revokes one of a user's keys unless it already is (the first revocation's time stays); the key as it is then. */
export async function revokeApiKeyOf(
  db: Db,
  params: { id: string; userId: string; now: Date },
): Promise<ApiKey | null> {
  await db.prisma.apiKey.updateMany({
    where: { id: params.id, userId: params.userId, revokedAt: null },
    data: { revokedAt: params.now },
  });
  return db.prisma.apiKey.findFirst({ where: { id: params.id, userId: params.userId } });
}
