import type { Db } from '../handle';
import { secretBoxOf } from '../handle';
import type { Prisma } from '../generated/client';
import type { StatementParams } from './named-parameters';
import { idempotencyKeySlot } from '../secret-box';

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
    const { count } = await db.prisma.idempotencyKey.createMany({ data: [{ ...id, ...fresh }], skipDuplicates: true });
    if (count === 1) return { kind: 'claimed', lockedAt: now };
    const row = await db.prisma.idempotencyKey.findUnique({ where: { scope_key: id } });
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
    const taken = await db.prisma.idempotencyKey.updateMany({
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
  await db.prisma.idempotencyKey.updateMany({
    where: { ...id, lockedAt, status: null },
    data: { ...response, body: secretBoxOf(db).seal(response.body, idempotencyKeySlot(id.scope, id.key)) },
  });
}

/** Gives the key back without a response (the request failed on our side), so a retry runs again. */
export async function releaseIdempotencyKey(db: Db, id: IdempotencyKeyId, lockedAt: Date) {
  await db.prisma.idempotencyKey.deleteMany({ where: { ...id, lockedAt, status: null } });
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

/** The parts a single-statement creation splices in to write its outcome with its effect (see `KeyOutcome`). */
export interface OutcomeStatement {
  /** CTEs to open the statement's WITH list with (empty, or ending in a comma). */
  lockHeldKey: string;
  /** A condition to AND into the effect's first write: false once another request has retaken the key. */
  guard: string;
  /** The CTE writing the outcome, once `effect` (a CTE of the statement) returned its row (empty, or from a comma). */
  recordOutcome: (effect: string) => string;
  /** Its named parameters (`sendStatement`), all starting with `key`, for the statement's own to go with. */
  params: StatementParams;
}

/** What a creation without a key splices in: nothing. */
export const NO_OUTCOME: OutcomeStatement = { lockHeldKey: '', guard: 'TRUE', recordOutcome: () => '', params: {} };

/** Thrown inside a creation's transaction when the key is no longer this request's: its effect is rolled back. */
export class KeyHoldLost extends Error {
  constructor() {
    super('the idempotency key was retaken while its first request ran');
  }
}

/**
 * A creation's outcome, the response a retry with the same key replays, written by the creation itself in the same
 * statement or transaction as its effect, so a crash leaves either both or neither. The caller (who knows what the
 * client is answered, `respond`) builds it; the creation only says where its effect is. A key whose hold was
 * retaken (its request ran past the lock time) makes the effect do nothing (`guard`) or roll back (`KeyHoldLost`).
 */
export class KeyOutcome<Created> {
  /** Whether a creation wrote it: its request then has nothing left to store. */
  written = false;

  constructor(
    private readonly db: Db,
    private readonly held: HeldKey,
    private readonly respond: (created: Created) => StoredResponse,
  ) {}

  private sealed(created: Created): StoredResponse {
    const response = this.respond(created);
    const slot = idempotencyKeySlot(this.held.id.scope, this.held.id.key);
    return { ...response, body: secretBoxOf(this.db).seal(response.body, slot) };
  }

  /**
   * The parts of one statement: the key row locked while this request holds it (so a retake waits for the
   * statement, then finds the key finished), and the outcome written from the effect's row. `otherwise` is another
   * outcome, taken when its SQL condition on the effect's row holds.
   */
  statement(created: Created, otherwise?: { when: string; created: Created }): OutcomeStatement {
    const response = this.sealed(created);
    const other = otherwise && this.sealed(otherwise.created);
    this.written = true;
    return {
      lockHeldKey: `held_key AS (
           SELECT 1 FROM idempotency_keys
           WHERE scope = :keyScope AND key = :keyName AND locked_at = :keyLockedAt::timestamptz AND status IS NULL
           FOR UPDATE),`,
      guard: 'EXISTS (SELECT FROM held_key)',
      recordOutcome: (effect) => `,
         recorded_key AS (
           UPDATE idempotency_keys k SET status = :keyStatus::int, content_type = :keyContentType,
             location = :keyLocation,
             body = ${otherwise ? `CASE WHEN ${otherwise.when} THEN :keyOtherBody ELSE :keyBody END` : ':keyBody'}
           FROM ${effect}
           WHERE k.scope = :keyScope AND k.key = :keyName AND k.locked_at = :keyLockedAt::timestamptz
             AND k.status IS NULL)`,
      params: {
        keyScope: this.held.id.scope,
        keyName: this.held.id.key,
        keyLockedAt: this.held.lockedAt.toISOString(),
        keyStatus: response.status,
        keyContentType: response.contentType,
        keyLocation: response.location,
        keyBody: response.body,
        ...(other && { keyOtherBody: other.body }),
      },
    };
  }

  /** Writes the outcome inside the creation's transaction `tx`; throws `KeyHoldLost` (rolling it back) if retaken. */
  async recordIn(tx: Prisma.TransactionClient, created: Created): Promise<void> {
    const { count } = await tx.idempotencyKey.updateMany({
      where: { ...this.held.id, lockedAt: this.held.lockedAt, status: null },
      data: this.sealed(created),
    });
    if (count !== 1) throw new KeyHoldLost();
    this.written = true;
  }
}

/** `outcome`'s statement parts, or nothing to splice in for a creation without a key. */
export const outcomeStatement = <Created>(
  outcome: KeyOutcome<Created> | undefined,
  created: Created,
  otherwise?: { when: string; created: Created },
): OutcomeStatement => (outcome ? outcome.statement(created, otherwise) : NO_OUTCOME);
