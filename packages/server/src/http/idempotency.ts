import { hash } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import type { Db } from '@works-api/prisma';
import {
  claimIdempotencyKey,
  completeIdempotencyKey,
  type ExistingKey,
  type HeldKey,
  type IdempotencyKeyId,
  type Recorded,
  releaseIdempotencyKey,
  type StoredResponse,
} from '@works-api/prisma';
import type { OutageMonitor } from '@works-api/prisma';
import { authorize, type Permission } from '../domain/access';
import { resultFromText } from '../domain/idempotent-results';
import type { OperationId } from '../handlers/types';
import { ProblemError } from '../domain/errors';
import { entityTag, resourceOf } from './etag';
import type { Logger } from '../observability/logger';

export const IDEMPOTENT_REPLAYED_HEADER = 'Idempotent-Replayed';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      /** The Idempotency-Key this request holds while its creation runs (idempotentCreation). */
      heldKey?: HeldKey;
    }
  }
}

/** Partners are promised replays for 24 hours. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/**
 * A key locked for longer than this belongs to a request that died (its process crashed): it can be retaken. No
 * effect can run twice when it is: a creation records its result with its effect, and only while it holds the key.
 */
export const IDEMPOTENCY_LOCK_TIMEOUT_MS = 60 * 1000;

export type Claim =
  /** This request holds the key now; `lockedAt` identifies the hold. */
  | { kind: 'claimed'; lockedAt: Date }
  /** The first request with this key is still running. */
  | { kind: 'in_use' }
  /** The key was first used with another request line or body. */
  | { kind: 'reused'; firstRequest: string; sameRequest: boolean }
  /** The first request finished: replay its answer. */
  | { kind: 'done'; recorded: Recorded };

/** One request's attempt at a key: its request line and body, when, and how long a holder may run. */
export interface KeyAttempt {
  /** The method and path (`POST /v1/tenants`). */
  request: string;
  /** The hash of the canonical JSON body. */
  bodyHash: string;
  now: Date;
  /** IDEMPOTENCY_LOCK_TIMEOUT_MS unless configured. */
  lockTimeoutMs?: number | undefined;
}

/**
 * What a request with a key that is already taken gets: an expired key, or one whose holder died while running
 * the same request, is taken over; another request line or body is a misuse; a finished one is replayed.
 */
export function judgeTakenKey(
  existing: ExistingKey,
  { request, bodyHash, now, lockTimeoutMs = IDEMPOTENCY_LOCK_TIMEOUT_MS }: KeyAttempt,
): 'retake' | Claim {
  const sameRequest = existing.request === request;
  const sameBody = sameRequest && existing.bodyHash === bodyHash;
  const expired = existing.expiresAt.getTime() <= now.getTime();
  const abandoned = !existing.finished && now.getTime() - existing.lockedAt.getTime() > lockTimeoutMs;
  if (expired || (abandoned && sameBody)) return 'retake';
  if (!sameBody) return { kind: 'reused', firstRequest: existing.request, sameRequest };
  if (!existing.finished) return { kind: 'in_use' };
  return { kind: 'done', recorded: existing.recorded() };
}

/** Takes `id` for this request line and body, or says why not (the rules above). */
export async function claimKey(db: Db, id: IdempotencyKeyId, attempt: KeyAttempt): Promise<Claim> {
  const hold = {
    request: attempt.request,
    bodyHash: attempt.bodyHash,
    expiresAt: new Date(attempt.now.getTime() + IDEMPOTENCY_TTL_MS),
  };
  const claim = await claimIdempotencyKey(db, id, hold, (existing) => judgeTakenKey(existing, attempt), attempt.now);
  // Lost every race for it to other requests: as good as in use.
  return claim ?? { kind: 'in_use' };
}

/** JSON with sorted keys, so `{"a":1,"b":2}` and `{"b":2,"a":1}` are the same body. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const object = value as Record<string, unknown>;
    const members = Object.keys(object)
      .filter((key) => object[key] !== undefined)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson(object[key])}`);
    return `{${members.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * What a replay re-checks first, for the creations inside a tenant: the permission the operation needs, as the
 * caller holds it now. A replay hands back the first response, which may carry what only that permission shows (a
 * webhook endpoint's signing secret): a caller who has since been demoted gets 403, one who left or was removed
 * 404, exactly as a new request would, and not the stored response. Creations outside a tenant (a tenant, an API
 * key, an operator's user) answer with what the caller made for themselves, and replay as they are.
 */
export const replayPermissions = {
  addMember: 'manageMembers',
  createWork: 'createWork',
  createRequest: 'sendRequest',
  createRequestBatch: 'sendRequest',
  createWebhookEndpoint: 'manageWebhooks',
} as const satisfies Partial<Record<OperationId, Permission>>;

/** The check `replayPermissions` asks of a replay of `operationId`, or undefined when it asks none. */
export function replayCheckFor(db: Db, operationId: string): ((req: Request) => Promise<unknown>) | undefined {
  if (!Object.hasOwn(replayPermissions, operationId)) return undefined;
  const permission = replayPermissions[operationId as keyof typeof replayPermissions];
  return (req) => authorize(db, req.actor!, String(req.params.tenant_id), permission);
}

/**
 * `Idempotency-Key` on a creating POST (mounted only on those). Runs after authentication and validation, so
 * a request the contract refuses never takes a key. The first request with a key locks it and runs, holding it
 * (`req.heldKey`): its creation guards its effect with the hold and records its result with it, in the same
 * statement or transaction; a response with no effect (a refusal) is stored here before it is sent. A retry with
 * the same key and body gets the same answer again (`render` makes it from a recorded result, as the first one
 * was made), marked `Idempotent-Replayed: true`, and creates nothing, once `beforeReplay` (the caller's
 * permission, see `replayPermissions`) has passed. A 5xx gives the key back so the retry runs again, unless its
 * effect committed: then the retry replays it.
 */
export function idempotentCreation(
  db: Db,
  logger: Logger,
  options: {
    etag: ReadonlySet<number>;
    outage: OutageMonitor;
    onReplay?: () => void;
    beforeReplay?: ((req: Request) => Promise<unknown>) | undefined;
    /** The answer to a request whose creation returned `result` (the operation's handler, `Creation.respond`). */
    render: (result: unknown, req: Request) => StoredResponse;
    /** IDEMPOTENCY_LOCK_TIMEOUT_MS. */
    lockTimeoutMs?: number;
  },
): RequestHandler {
  const lockTimeoutMs = options.lockTimeoutMs ?? IDEMPOTENCY_LOCK_TIMEOUT_MS;
  return async (req, res, next) => {
    const key = req.headers['idempotency-key'];
    if (typeof key !== 'string') return next();
    const id: IdempotencyKeyId = { scope: req.actor?.userId ?? 'operator', key };
    const request = `${req.method} ${req.originalUrl.split('?')[0]}`;
    const bodyHash = hash('sha256', canonicalJson(req.body ?? null), 'hex');
    const claimedAt = new Date();
    const claim = await claimKey(db, id, { request, bodyHash, now: claimedAt, lockTimeoutMs }).catch(
      async (error: unknown) => {
        // The claim may have committed with its answer lost (a failover): give back the hold it may have taken,
        // once the database is back, so the retry is not refused as in use for a minute. Nothing ran under it.
        if (await options.outage.explains(error))
          saveWhileHeld(() => releaseIdempotencyKey(db, id, claimedAt), claimedAt, lockTimeoutMs);
        throw error;
      },
    );
    switch (claim.kind) {
      case 'in_use':
        throw new ProblemError(
          'idempotency_key_in_use',
          'A request with this Idempotency-Key is still being processed; retry once it has finished.',
        );
      case 'reused':
        throw new ProblemError(
          'idempotency_key_reused',
          claim.sameRequest
            ? 'This Idempotency-Key was first used with a different request body.'
            : `This Idempotency-Key was first used with another operation (${claim.firstRequest}).`,
        );
      case 'done':
        await options.beforeReplay?.(req);
        options.onReplay?.();
        return replay(res, answerOf(claim.recorded, req, options.render), options.etag);
      case 'claimed':
        break;
    }
    req.heldKey = { id, lockedAt: claim.lockedAt };
    // Hold the response until it is stored: a retry that arrives after the client saw it must find it.
    const send = res.send;
    res.send = function storeThenSend(body?: unknown) {
      res.send = send;
      const status = res.statusCode;
      // A success is a creation's: it recorded its result with its effect, and nothing is left to store.
      if (status < 300) return send.call(res, body);
      const text = Buffer.isBuffer(body)
        ? body.toString('utf8')
        : typeof body === 'string'
          ? body
          : JSON.stringify(body);
      const stored: StoredResponse = {
        status,
        contentType: String(res.getHeader('Content-Type') ?? 'application/json'),
        location: (res.getHeader('Location') as string | undefined) ?? null,
        body: text,
      };
      const save = () =>
        status >= 500
          ? releaseIdempotencyKey(db, id, claim.lockedAt)
          : completeIdempotencyKey(db, id, claim.lockedAt, stored);
      save()
        .catch(async (error: unknown) => {
          // During an outage the monitor logs it once; a line per request would flood the log.
          if (await options.outage.explains(error)) {
            options.outage.report(error);
            // Written once the database is back (a failover takes seconds), not left locked: a retry would
            // otherwise be refused as in use until the hold is abandoned, a minute later.
            return saveWhileHeld(save, claim.lockedAt, lockTimeoutMs);
          }
          logger.error({ err: error, reqId: req.id }, 'could not store the idempotent response');
        })
        .finally(() => send.call(res, body));
      return res;
    };
    next();
  };
}

/** How often a key's outcome is written again while the database is away. */
const SAVE_RETRY_MS = 1_000;

/**
 * Writes a key's outcome (its stored response, or its release after a 5xx) again every second, in the background,
 * until it succeeds or the hold would count as abandoned anyway (the lock time after `lockedAt`).
 */
function saveWhileHeld(save: () => Promise<unknown>, lockedAt: Date, lockTimeoutMs: number): void {
  const giveUpAt = lockedAt.getTime() + lockTimeoutMs;
  const retry = () => {
    if (Date.now() + SAVE_RETRY_MS >= giveUpAt) return;
    setTimeout(() => void save().catch(retry), SAVE_RETRY_MS).unref();
  };
  retry();
}

const answerOf = (recorded: Recorded, req: Request, render: (result: unknown, req: Request) => StoredResponse) =>
  recorded.kind === 'result' ? render(resultFromText(recorded.text), req) : recorded.response;

function replay(res: Response, stored: StoredResponse, etag: ReadonlySet<number>): void {
  res.status(stored.status);
  res.setHeader('Content-Type', stored.contentType);
  res.setHeader(IDEMPOTENT_REPLAYED_HEADER, 'true');
  if (stored.location) res.setHeader('Location', stored.location);
  if (etag.has(stored.status)) res.setHeader('ETag', entityTag(resourceOf(JSON.parse(stored.body))));
  res.send(stored.body);
}
