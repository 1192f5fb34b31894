import type { Db } from '../handle';
import { secretBoxOf } from '../handle';
import type { Prisma } from '../generated/client';
import type { StatementParams } from './named-parameters';
import { idempotencyKeySlot } from '../secret-box';
import { sendStatement } from './send';

/**
 * The `idempotency_keys` table: one row per (scope, key). A request takes a key by inserting its row (locked:
 * nothing recorded yet); a creation records its result with its effect, a refusal stores its response; later
 * requests with the same key read the row. Every
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
  /** Whether the first request finished: recorded its creation's result, or stored a response. */
  finished: boolean;
  /** What it finished with, opened on demand (a finished key only). */
  recorded(): Recorded;
}

/**
 * What a finished key holds: the result its creation returned (recorded with the effect), from which a retry's
 * answer is rendered; or the response itself, for a request that created nothing (a refusal).
 */
export type Recorded = { kind: 'result'; text: string } | { kind: 'response'; response: StoredResponse };

/**
 * A key whose request is still running (or died): it has recorded no result and stored no response. Every write
 * that holds, completes, releases or retakes a key is conditional on it; `alias` names the key table's row.
 */
const nothingRecorded = (alias = '') => `${alias}status IS NULL AND ${alias}result IS NULL`;
const recordedNothing = (row: { status: number | null; result: string | null }) =>
  row.status === null && row.result === null;

/** A key row as a claim reads it (every column null when the key was free and this claim took it). */
interface KeyRow {
  taken: boolean;
  request: string | null;
  bodyHash: string | null;
  status: number | null;
  contentType: string | null;
  location: string | null;
  body: string | null;
  result: string | null;
  lockedAt: Date | null;
  expiresAt: Date | null;
}

/**
 * Takes a free key, or reads the row that has it: one round trip either way. The read is the statement's snapshot:
 * a row another request committed after it began is taken by none, read by none (`taken` false, no row), and the
 * caller looks again.
 */
const CLAIM_KEY = `WITH taken AS (
    INSERT INTO idempotency_keys (scope, key, request, body_hash, locked_at, created_at, expires_at)
    VALUES (:scope, :key, :request, :bodyHash, :now::timestamptz, :now::timestamptz, :expiresAt::timestamptz)
    ON CONFLICT (scope, key) DO NOTHING RETURNING 1)
  SELECT EXISTS (SELECT FROM taken) AS taken, k.request, k.body_hash AS "bodyHash", k.status,
         k.content_type AS "contentType", k.location, k.body, k.result, k.locked_at AS "lockedAt",
         k.expires_at AS "expiresAt"
  FROM (SELECT 1) AS one
  LEFT JOIN idempotency_keys k ON NOT EXISTS (SELECT FROM taken) AND k.scope = :scope AND k.key = :key`;

/** Takes over the key read at `readLockedAt`, only if nobody did since and it is as finished as it was read. */
const RETAKE_KEY = `UPDATE idempotency_keys
  SET request = :request, body_hash = :bodyHash, status = NULL, content_type = NULL, location = NULL, body = NULL,
      result = NULL, locked_at = :now::timestamptz, created_at = :now::timestamptz, expires_at = :expiresAt::timestamptz
  WHERE scope = :scope AND key = :key AND locked_at = :readLockedAt::timestamptz
    AND (${nothingRecorded()}) = :readUnfinished
  RETURNING 1`;

/**
 * Takes the key for `hold`, or returns what `judge` makes of the request that has it: `'retake'` takes it over
 * (only if nobody else did since it was read), anything else is the answer. A row can vanish between our
 * insert and our read (released after a 5xx, or cleaned up), or be committed after it: then it looks again.
 * Statements by key, prepared: a keyed creation's first round trip.
 */
export async function claimIdempotencyKey<Refusal>(
  db: Db,
  id: IdempotencyKeyId,
  hold: KeyHold,
  judge: (existing: ExistingKey) => 'retake' | Refusal,
  now = new Date(),
): Promise<{ kind: 'claimed'; lockedAt: Date } | Refusal | undefined> {
  const attempt = {
    ...id,
    request: hold.request,
    bodyHash: hold.bodyHash,
    now: now.toISOString(),
    expiresAt: hold.expiresAt.toISOString(),
  };
  for (let round = 1; round <= 3; round++) {
    const [row] = await sendStatement<KeyRow>(db, CLAIM_KEY, attempt, { prepared: true });
    if (row?.taken) return { kind: 'claimed', lockedAt: now };
    if (!row || row.lockedAt === null) continue;
    const verdict = judge(existingKey(db, id, row));
    if (verdict !== 'retake') return verdict;
    const readUnfinished = recordedNothing(row);
    const params = { ...attempt, readLockedAt: row.lockedAt.toISOString(), readUnfinished };
    if ((await sendStatement(db, RETAKE_KEY, params, { prepared: true })).length === 1)
      return { kind: 'claimed', lockedAt: now };
  }
  // Three rounds lost to other requests: the key is busy.
  return undefined;
}

/** The row a claim read, as the caller's rules see it (its stored answer opened only when asked for). */
function existingKey(db: Db, id: IdempotencyKeyId, row: KeyRow): ExistingKey {
  return {
    request: row.request!,
    bodyHash: row.bodyHash!,
    lockedAt: row.lockedAt!,
    expiresAt: row.expiresAt!,
    finished: !recordedNothing(row),
    recorded: () => {
      const open = (sealed: string) => secretBoxOf(db).open(sealed, idempotencyKeySlot(id.scope, id.key));
      if (row.result !== null) return { kind: 'result', text: open(row.result) };
      const response = {
        status: row.status ?? 0,
        contentType: row.contentType ?? 'application/json',
        location: row.location,
        body: row.body === null ? '' : open(row.body),
      };
      return { kind: 'response', response };
    },
  };
}

/**
 * Stores the response of the request holding the key, one that created nothing (unless its hold was retaken
 * meanwhile). A creation records its result with its effect instead (`resultStatement`, `recordResultIn`).
 */
export async function completeIdempotencyKey(db: Db, id: IdempotencyKeyId, lockedAt: Date, response: StoredResponse) {
  await sendStatement(
    db,
    `UPDATE idempotency_keys SET status = :status::int, content_type = :contentType, location = :location, body = :body
     WHERE scope = :scope AND key = :key AND locked_at = :lockedAt::timestamptz AND ${nothingRecorded()}`,
    {
      ...id,
      ...response,
      lockedAt: lockedAt.toISOString(),
      body: secretBoxOf(db).seal(response.body, idempotencyKeySlot(id.scope, id.key)),
    },
  );
}

/** Gives the key back without a response (the request failed on our side), so a retry runs again. */
export async function releaseIdempotencyKey(db: Db, id: IdempotencyKeyId, lockedAt: Date) {
  await sendStatement(
    db,
    `DELETE FROM idempotency_keys
     WHERE scope = :scope AND key = :key AND locked_at = :lockedAt::timestamptz AND ${nothingRecorded()}`,
    { ...id, lockedAt: lockedAt.toISOString() },
  );
}

/**
 * Deletes up to `batch` expired keys; returns how many. Bounded, so a large backlog never turns into one long
 * statement: call it again while it returns `batch`. Oldest first, through the expires_at index: without the
 * order, PostgreSQL may pick a sequential scan that reads past every live key to find the expired ones; by
 * ctid, so the delete itself is a TID scan of the batch, not a join the planner may turn into a scan of the table.
 */
export async function deleteExpiredIdempotencyKeys(db: Db, now = new Date(), batch = 1000): Promise<number> {
  const [deleted] = await sendStatement<{ count: number }>(
    db,
    `WITH deleted AS (
       DELETE FROM idempotency_keys WHERE ctid = ANY (ARRAY(
         SELECT ctid FROM idempotency_keys WHERE expires_at <= :now::timestamptz ORDER BY expires_at LIMIT :batch::int
       ))
       RETURNING 1)
     SELECT count(*)::int AS count FROM deleted`,
    { now: now.toISOString(), batch },
  );
  return deleted?.count ?? 0;
}

/** The key a request holds while its creation runs: the hold is this request's as long as `lockedAt` is unchanged. */
export interface HeldKey {
  id: IdempotencyKeyId;
  lockedAt: Date;
}

/** The parts a single-statement creation splices in to record its result with its effect (see `resultStatement`). */
export interface OutcomeStatement {
  /** CTEs to open the statement's WITH list with (empty, or ending in a comma). */
  lockHeldKey: string;
  /** A condition to AND into the effect's first write: false once another request has retaken the key. */
  guard: string;
  /** The CTE recording the result, once `effect` (a CTE of the statement) returned its row (empty, or from a comma). */
  recordResult: (effect: string) => string;
  /** Its named parameters (`sendStatement`), all starting with `key`, for the statement's own to go with. */
  params: StatementParams;
}

/** What a creation without a key splices in: nothing. */
export const NO_OUTCOME: OutcomeStatement = { lockHeldKey: '', guard: 'TRUE', recordResult: () => '', params: {} };

/** Thrown inside a creation's transaction when the key is no longer this request's: its effect is rolled back. */
export class KeyHoldLost extends Error {
  constructor() {
    super('the idempotency key was retaken while its first request ran');
  }
}

/** A creation's result (its text, as the caller writes it), sealed: the result that creates a key carries its secret. */
const sealedResult = (db: Db, held: HeldKey, text: string) =>
  secretBoxOf(db).seal(text, idempotencyKeySlot(held.id.scope, held.id.key));

/**
 * The parts of a creation's one statement under a held key: the key row locked while
 * this request holds it (so a retake waits for the statement, then finds the key finished), the effect guarded by
 * the hold, and `result` (the text of what the creation returns) recorded from the effect's row, in the same
 * statement, so a crash leaves both or neither. A retry's answer is rendered from it, as the first one was (the
 * HTTP layer's). `otherwise` is another result, recorded when its SQL condition on the effect's row holds.
 */
export function resultStatement(
  db: Db,
  held: HeldKey,
  result: string,
  otherwise?: { when: string; result: string },
): OutcomeStatement {
  return {
    lockHeldKey: `held_key AS (
         SELECT 1 FROM idempotency_keys
         WHERE scope = :keyScope AND key = :keyName AND locked_at = :keyLockedAt::timestamptz
           AND ${nothingRecorded()}
         FOR UPDATE),`,
    guard: 'EXISTS (SELECT FROM held_key)',
    recordResult: (effect) => `,
       recorded_key AS (
         UPDATE idempotency_keys k
         SET result = ${otherwise ? `CASE WHEN ${otherwise.when} THEN :keyOtherResult ELSE :keyResult END` : ':keyResult'}
         FROM ${effect}
         WHERE k.scope = :keyScope AND k.key = :keyName AND k.locked_at = :keyLockedAt::timestamptz
           AND ${nothingRecorded('k.')})`,
    params: {
      keyScope: held.id.scope,
      keyName: held.id.key,
      keyLockedAt: held.lockedAt.toISOString(),
      keyResult: sealedResult(db, held, result),
      ...(otherwise && { keyOtherResult: sealedResult(db, held, otherwise.result) }),
    },
  };
}

/**
 * Records a creation's result (its text) under its held key inside the creation's transaction `tx`; throws
 * `KeyHoldLost` (rolling the effect back) if another request has retaken the key.
 */
export async function recordResultIn(db: Db, tx: Prisma.TransactionClient, held: HeldKey, result: string) {
  const recorded = await sendStatement(
    tx,
    `UPDATE idempotency_keys SET result = :result
     WHERE scope = :scope AND key = :key AND locked_at = :lockedAt::timestamptz AND ${nothingRecorded()}
     RETURNING 1`,
    { ...held.id, lockedAt: held.lockedAt.toISOString(), result: sealedResult(db, held, result) },
  );
  if (recorded.length !== 1) throw new KeyHoldLost();
}
