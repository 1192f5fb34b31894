import type { Db } from '../handle';
import { secretBoxOf } from '../handle';
import type { Prisma } from '../generated/client';
import type { StatementParams } from './named-parameters';
import { idempotencyKeySlot } from '../secret-box';

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
  const fresh = {
    ...{ ...hold, status: null, contentType: null, location: null, body: null, result: null },
    ...{ lockedAt: now, createdAt: now },
  };
  for (let attempt = 1; attempt <= 3; attempt++) {
    const { count } = await db.prisma.idempotencyKey.createMany({ data: [{ ...id, ...fresh }], skipDuplicates: true });
    if (count === 1) return { kind: 'claimed', lockedAt: now };
    const row = await db.prisma.idempotencyKey.findUnique({ where: { scope_key: id } });
    if (!row) continue;
    const verdict = judge({
      request: row.request,
      bodyHash: row.bodyHash,
      lockedAt: row.lockedAt,
      expiresAt: row.expiresAt,
      finished: row.status !== null || row.result !== null,
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
    });
    if (verdict !== 'retake') return verdict;
    const taken = await db.prisma.idempotencyKey.updateMany({
      where: { ...id, lockedAt: row.lockedAt, status: row.status, result: row.result },
      data: fresh,
    });
    if (taken.count === 1) return { kind: 'claimed', lockedAt: now };
  }
  // Three rounds lost to other requests: the key is busy.
  return undefined;
}

/**
 * Stores the response of the request holding the key, one that created nothing (unless its hold was retaken
 * meanwhile). A creation records its result with its effect instead (`resultStatement`, `recordResultIn`).
 */
export async function completeIdempotencyKey(db: Db, id: IdempotencyKeyId, lockedAt: Date, response: StoredResponse) {
  await db.prisma.idempotencyKey.updateMany({
    where: { ...id, lockedAt, status: null, result: null },
    data: { ...response, body: secretBoxOf(db).seal(response.body, idempotencyKeySlot(id.scope, id.key)) },
  });
}

/** Gives the key back without a response (the request failed on our side), so a retry runs again. */
export async function releaseIdempotencyKey(db: Db, id: IdempotencyKeyId, lockedAt: Date) {
  await db.prisma.idempotencyKey.deleteMany({ where: { ...id, lockedAt, status: null, result: null } });
}

/**
 * Deletes up to `batch` expired keys; returns how many. Bounded, so a large backlog never turns into one long
 * statement: call it again while it returns `batch`. Oldest first, through the expires_at index: without the
 * order, PostgreSQL may pick a sequential scan that reads past every live key to find the expired ones; by
 * ctid, so the delete itself is a TID scan of the batch, not a join the planner may turn into a scan of the table.
 */
export async function deleteExpiredIdempotencyKeys(db: Db, now = new Date(), batch = 1000): Promise<number> {
  return db.prisma.$executeRaw`
    DELETE FROM idempotency_keys WHERE ctid = ANY (ARRAY(
      SELECT ctid FROM idempotency_keys WHERE expires_at <= ${now} ORDER BY expires_at LIMIT ${batch}
    ))`;
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
           AND status IS NULL AND result IS NULL
         FOR UPDATE),`,
    guard: 'EXISTS (SELECT FROM held_key)',
    recordResult: (effect) => `,
       recorded_key AS (
         UPDATE idempotency_keys k
         SET result = ${otherwise ? `CASE WHEN ${otherwise.when} THEN :keyOtherResult ELSE :keyResult END` : ':keyResult'}
         FROM ${effect}
         WHERE k.scope = :keyScope AND k.key = :keyName AND k.locked_at = :keyLockedAt::timestamptz
           AND k.status IS NULL AND k.result IS NULL)`,
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
  const { count } = await tx.idempotencyKey.updateMany({
    where: { ...held.id, lockedAt: held.lockedAt, status: null, result: null },
    data: { result: sealedResult(db, held, result) },
  });
  if (count !== 1) throw new KeyHoldLost();
}
