import type { Db } from './client';
import { secretBoxOf } from './secret-box';

/**
 * The `idempotency_keys` table: one row per (scope, key). A request takes a key by inserting its row (locked:
 * no status yet); it stores its response when done; later requests with the same key read the row. Every
 * change is a conditional write, so two server processes racing for one key cannot both win. The stored body is
 * sealed (secret-box.ts): the response that creates an API key or a webhook endpoint carries its secret.
 */

/** Partners are promised replays for 24 hours. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/** A key locked for longer than this belongs to a request that died (its process crashed): it can be retaken. */
export const IDEMPOTENCY_LOCK_TIMEOUT_MS = 60 * 1000;

export interface IdempotencyKeyId {
  /** The user behind the API key, or `operator`. */
  scope: string;
  key: string;
}

export interface StoredResponse {
  status: number;
  contentType: string;
  location: string | null;
  body: string;
}

export type Claim =
  /** This request holds the key now; `lockedAt` identifies the hold. */
  | { kind: 'claimed'; lockedAt: Date }
  /** The first request with this key is still running. */
  | { kind: 'in_use' }
  /** The key was first used with another request line or body. */
  | { kind: 'reused'; firstRequest: string; sameRequest: boolean }
  /** The first request finished: replay its response. */
  | { kind: 'done'; response: StoredResponse };

/** Takes the key for this request, or says why not. */
export async function claimIdempotencyKey(
  db: Db,
  id: IdempotencyKeyId,
  request: string,
  bodyHash: string,
  now = new Date(),
): Promise<Claim> {
  const fresh = {
    request,
    bodyHash,
    status: null,
    contentType: null,
    location: null,
    body: null,
    lockedAt: now,
    createdAt: now,
    expiresAt: new Date(now.getTime() + IDEMPOTENCY_TTL_MS),
  };
  // A row can vanish between our insert and our read (released after a 5xx, or cleaned up): then look again.
  for (let attempt = 1; attempt <= 3; attempt++) {
    const { count } = await db.idempotencyKey.createMany({ data: [{ ...id, ...fresh }], skipDuplicates: true });
    if (count === 1) return { kind: 'claimed', lockedAt: now };
    const row = await db.idempotencyKey.findUnique({ where: { scope_key: id } });
    if (!row) continue;
    const expired = row.expiresAt.getTime() <= now.getTime();
    const sameRequest = row.request === request;
    const sameBody = sameRequest && row.bodyHash === bodyHash;
    const abandoned = row.status === null && now.getTime() - row.lockedAt.getTime() > IDEMPOTENCY_LOCK_TIMEOUT_MS;
    if (expired || (abandoned && sameBody)) {
      // Retake it only if nobody else did since we read it.
      const taken = await db.idempotencyKey.updateMany({
        where: { ...id, lockedAt: row.lockedAt, status: row.status },
        data: fresh,
      });
      if (taken.count === 1) return { kind: 'claimed', lockedAt: now };
      continue;
    }
    if (!sameBody) return { kind: 'reused', firstRequest: row.request, sameRequest };
    if (row.status === null) return { kind: 'in_use' };
    return {
      kind: 'done',
      response: {
        status: row.status,
        contentType: row.contentType ?? 'application/json',
        location: row.location,
        body: row.body === null ? '' : secretBoxOf(db).open(row.body, 'idempotent-response'),
      },
    };
  }
  return { kind: 'in_use' };
}

/** Stores the response of the request holding the key (unless its hold was retaken meanwhile). */
export async function completeIdempotencyKey(db: Db, id: IdempotencyKeyId, lockedAt: Date, response: StoredResponse) {
  await db.idempotencyKey.updateMany({
    where: { ...id, lockedAt, status: null },
    data: { ...response, body: secretBoxOf(db).seal(response.body, 'idempotent-response') },
  });
}

/** Gives the key back without a response (the request failed on our side), so a retry runs again. */
export async function releaseIdempotencyKey(db: Db, id: IdempotencyKeyId, lockedAt: Date) {
  await db.idempotencyKey.deleteMany({ where: { ...id, lockedAt, status: null } });
}

/**
 * Deletes up to `batch` expired keys; returns how many. Bounded, so a large backlog never turns into one long
 * statement: call it again while it returns `batch`. Oldest first, through the expires_at index: without the
 * order, PostgreSQL may pick a sequential scan that reads past every live key to find the expired ones; by
 * ctid, so the delete itself is a TID scan of the batch, not a join the planner may turn into a scan of the table.
 */
export async function deleteExpiredIdempotencyKeys(db: Db, now = new Date(), batch = 1000): Promise<number> {
  return db.$executeRaw`
    DELETE FROM idempotency_keys WHERE ctid = ANY (ARRAY(
      SELECT ctid FROM idempotency_keys WHERE expires_at <= ${now} ORDER BY expires_at LIMIT ${batch}
    ))`;
}
