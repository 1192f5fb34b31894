import type { Db } from './handle';
import { secretBoxOf } from './handle';
import { idempotencyKeySlot } from './secret-box';

/**
 * The `idempotency_keys` table: one row per (scope, key). A request takes a key by inserting its row (locked:
 * no status yet); it stores its response when done; later requests with the same key read the row. Every
 * change is a conditional write, so two server processes racing for one key cannot both win. The stored body is
 * sealed (secret-box.ts): the response that creates an API key or a webhook endpoint carries its secret.
 * What a key promises (how long it lasts, when a hold is abandoned, what a second use gets) is the HTTP layer's:
 * http/idempotency.ts judges the rows this module reads.
 */

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

/** A hold on a key: the request line and body it was taken for, and until when the key lasts. */
export interface KeyHold {
  request: string;
  bodyHash: string;
  expiresAt: Date;
}

/** A key some request holds or held, as the caller's rules see it. */
export interface ExistingKey {
  request: string;
  bodyHash: string;
  lockedAt: Date;
  expiresAt: Date;
  /** Whether the first request stored its response (it is still running, or died, if not). */
  finished: boolean;
  /** The stored response, opened on demand (a finished key only). */
  storedResponse(): StoredResponse;
}

/**
 * Takes the key for `hold`, or returns what `judge` makes of the request that has it: `'retake'` takes it over
 * (only if nobody else did since it was read), anything else is the answer. A row can vanish between our
 * insert and our read (released after a 5xx, or cleaned up): then it looks again.
 */
export async function claimIdempotencyKey<Refusal>(
  db: Db,
  id: IdempotencyKeyId,
  hold: KeyHold,
  judge: (existing: ExistingKey) => 'retake' | Refusal,
  now = new Date(),
): Promise<{ kind: 'claimed'; lockedAt: Date } | Refusal | undefined> {
  const fresh = { ...hold, status: null, contentType: null, location: null, body: null, lockedAt: now, createdAt: now };
  for (let attempt = 1; attempt <= 3; attempt++) {
    const { count } = await db.idempotencyKey.createMany({ data: [{ ...id, ...fresh }], skipDuplicates: true });
    if (count === 1) return { kind: 'claimed', lockedAt: now };
    const row = await db.idempotencyKey.findUnique({ where: { scope_key: id } });
    if (!row) continue;
    const verdict = judge({
      request: row.request,
      bodyHash: row.bodyHash,
      lockedAt: row.lockedAt,
      expiresAt: row.expiresAt,
      finished: row.status !== null,
      storedResponse: () => ({
        status: row.status ?? 0,
        contentType: row.contentType ?? 'application/json',
        location: row.location,
        body: row.body === null ? '' : secretBoxOf(db).open(row.body, idempotencyKeySlot(id.scope, id.key)),
      }),
    });
    if (verdict !== 'retake') return verdict;
    const taken = await db.idempotencyKey.updateMany({
      where: { ...id, lockedAt: row.lockedAt, status: row.status },
      data: fresh,
    });
    if (taken.count === 1) return { kind: 'claimed', lockedAt: now };
  }
  // Three rounds lost to other requests: the key is busy.
  return undefined;
}

/** Stores the response of the request holding the key (unless its hold was retaken meanwhile). */
export async function completeIdempotencyKey(db: Db, id: IdempotencyKeyId, lockedAt: Date, response: StoredResponse) {
  await db.idempotencyKey.updateMany({
    where: { ...id, lockedAt, status: null },
    data: { ...response, body: secretBoxOf(db).seal(response.body, idempotencyKeySlot(id.scope, id.key)) },
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
