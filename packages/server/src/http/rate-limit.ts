import type { Request, RequestHandler, Response } from 'express';
import { type ClientRateLimitInfo, ipKeyGenerator, MemoryStore, rateLimit, type Store } from 'express-rate-limit';
import { ProblemError } from '../domain/errors';
import type { Logger } from '../observability/logger';

export interface RateLimitOptions {
  /** Requests per minute per user (all their API keys together), and for the operator token. */
  perMinute: number;
  /** Where the counters live; in this process when absent (see `redisRateLimitStore`). */
  store?: Store;
  logger: Logger;
  /** Called for every request refused with 429 (metrics), with the budget that refused it. */
  onRejected?: (budget: RateLimitBudget) => void;
  /** Operator routes (ADMIN_TOKEN): limited as one principal, `operator`. */
  isOperatorPath: (path: string) => boolean;
}

/** Which budget refused a request: a user's, the operator token's, or a client address's failed authentications. */
export type RateLimitBudget = 'user' | 'operator' | 'unauthenticated';

const WINDOW_MS = 60_000;

/**
 * A budget of requests per minute per user, after authentication: every API key of a user spends the same budget
 * (a user can mint keys, so a budget per key would be no limit), and the operator token has one of its own.
 * Announced in the IETF draft-8 `RateLimit-Policy` and `RateLimit` headers; over it, 429 `rate_limited` with
 * `Retry-After`. If the store fails (Redis down) requests pass rather than fail: the limit protects the service,
 * it must not take it down.
 */
export function rateLimitPerUser({
  perMinute,
  store,
  logger,
  onRejected,
  isOperatorPath,
}: RateLimitOptions): RequestHandler {
  const budgetOf = (req: Request): RateLimitBudget | undefined =>
    req.actor !== undefined ? 'user' : isOperatorPath(req.path) ? 'operator' : undefined;
  return rateLimit({
    windowMs: WINDOW_MS,
    limit: perMinute,
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    ...(store && { store }),
    skip: (req) => budgetOf(req) === undefined,
    keyGenerator: (req) => (req.actor ? `user:${req.actor.userId}` : 'operator'),
    handler: (req, res, next) => {
      const budget = budgetOf(req)!;
      onRejected?.(budget);
      const who = budget === 'user' ? 'You have' : 'The operator token has';
      next(
        new ProblemError(
          'rate_limited',
          `${who} used the ${perMinute} requests of this minute; retry after ${String(res.getHeader('Retry-After'))} seconds.`,
        ),
      );
    },
    passOnStoreError: true,
    logger: {
      error: (error, message) => logger.error({ err: error }, message),
      warn: (message) => logger.warn(message),
    },
    // The key is a user id, never an IP address: the IP-related checks do not apply.
    validate: { ip: false, trustProxy: false, xForwardedForHeader: false, keyGeneratorIpFallback: false },
  });
}

export interface FailedAuthenticationOptions {
  /** Failed authentications per minute per client address (RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE). */
  perMinute: number;
  /** Where the counts live, shared by every process (Redis, or the cluster's primary); this process's when absent. */
  store?: Store;
  logger: Logger;
  onRejected?: (budget: RateLimitBudget) => void;
}

/** A shared count that takes longer than this is taken as failed: the process's own counter takes over. */
export const SHARED_COUNT_TIMEOUT_MS = 500;
/** An address's blocks are pruned once this many are held, so a spray of addresses cannot grow the map for long. */
const MAX_BLOCKED_ADDRESSES = 10_000;
/** While the shared store fails, its warning is logged at most this often. */
const STORE_WARNING_EVERY_MS = 60_000;

/**
 * The budget of failed authentications (401: a missing, malformed, unknown or revoked API key, a wrong operator or
 * metrics token, a recipient call without its token) per client address. Only failures are counted, and only
 * failures are refused: once an address has failed `perMinute` times in the window, its next failures are 429
 * instead of 401 until the window ends, while a request from it whose credential is valid passes (an API key, the
 * operator or the metrics token: one client behind a NAT, or behind a load balancer without TRUST_PROXY, cannot
 * lock everyone else behind it out, the operator included).
 *
 * What a failure costs stays small: a malformed key (its prefix tells) is refused without any lookup, a
 * well-formed one costs the one indexed read every authentication costs, and an address this process knows to
 * be over budget costs no store round trip. The address is the connection's peer, or what X-Forwarded-For says
 * through the proxies TRUST_PROXY names; IPv6 addresses count by their /56 (one customer's network).
 *
 * The counts live in `store` (Redis, or the cluster's primary) so that every process shares them. When that store
 * fails or does not answer within SHARED_COUNT_TIMEOUT_MS (Redis down), this budget does not fail open, unlike the
 * others: the process counts in its own memory until the store is back, each process then allowing the budget on
 * its own.
 */
export class FailedAuthentications {
  private readonly shared: Store | undefined;
  private readonly own = new MemoryStore();
  private readonly blockedUntil = new Map<string, number>();
  private lastStoreWarning = 0;

  constructor(private readonly options: FailedAuthenticationOptions) {
    const init = { windowMs: WINDOW_MS } as Parameters<NonNullable<Store['init']>>[0];
    this.own.init(init);
    this.shared = options.store;
    void Promise.resolve(this.shared?.init?.(init)).catch((error: unknown) =>
      options.logger.error({ err: error }, 'rate limit: the failed-authentication store failed to start'),
    );
  }

  /** The 429 for a request from an address that is over budget now (as this process knows), else undefined. */
  private refusal(req: Request, res: Response): ProblemError<string> | undefined {
    const address = clientAddress(req);
    const until = this.blockedUntil.get(address);
    if (until === undefined) return undefined;
    if (until <= Date.now()) {
      this.blockedUntil.delete(address);
      return undefined;
    }
    return this.refuse(res, until);
  }

  /** Counts a failed authentication: resolves to the 401 it was, or to a 429 once the address is over budget. */
  async failed(req: Request, res: Response, unauthenticated: ProblemError<string>): Promise<ProblemError<string>> {
    const known = this.refusal(req, res);
    if (known) return known;
    const address = clientAddress(req);
    const { totalHits, resetTime } = await this.count(address);
    if (totalHits <= this.options.perMinute) return unauthenticated;
    const until = resetTime?.getTime() ?? Date.now() + WINDOW_MS;
    this.block(address, until);
    return this.refuse(res, until);
  }

  private async count(address: string): Promise<ClientRateLimitInfo> {
    if (this.shared) {
      let timer: NodeJS.Timeout | undefined;
      try {
        return await Promise.race([
          this.shared.increment(address),
          new Promise<never>((_, reject) => {
            timer = setTimeout(
              () => reject(new Error(`no answer within ${SHARED_COUNT_TIMEOUT_MS} ms`)),
              SHARED_COUNT_TIMEOUT_MS,
            );
          }),
        ]);
      } catch (error) {
        if (Date.now() - this.lastStoreWarning >= STORE_WARNING_EVERY_MS) {
          this.lastStoreWarning = Date.now();
          this.options.logger.warn(
            { err: error },
            'rate limit: the shared store cannot count failed authentications; this process counts them itself until it is back',
          );
        }
      } finally {
        clearTimeout(timer);
      }
    }
    return this.own.increment(address);
  }

  private block(address: string, until: number): void {
    if (this.blockedUntil.size >= MAX_BLOCKED_ADDRESSES) {
      const now = Date.now();
      for (const [key, end] of this.blockedUntil) if (end <= now) this.blockedUntil.delete(key);
    }
    if (this.blockedUntil.size < MAX_BLOCKED_ADDRESSES) this.blockedUntil.set(address, until);
  }

  private refuse(res: Response, until: number): ProblemError<string> {
    const seconds = Math.max(1, Math.ceil((until - Date.now()) / 1000));
    this.options.onRejected?.('unauthenticated');
    res.setHeader('Retry-After', String(seconds));
    return new ProblemError(
      'rate_limited',
      `Too many requests from your address failed authentication (${this.options.perMinute} a minute); retry after ${seconds} seconds.`,
    );
  }
}

const isUnauthenticated = (error: unknown): error is ProblemError<string> =>
  error instanceof ProblemError && error.code === 'unauthenticated';

/**
 * `authenticate` (a middleware that fails with 401 `unauthenticated`) with its failures counted by `budget`. A
 * request whose credential is valid passes whatever its address's count, be it an API key or the operator token:
 * only failures are refused, so nobody sharing the operator's address (a NAT, an office, a proxy without
 * TRUST_PROXY) can lock the operator out. The credential is always compared (in constant time), over budget too.
 */
export function countingFailures(
  authenticate: RequestHandler,
  budget: FailedAuthentications | undefined,
): RequestHandler {
  if (!budget) return authenticate;
  return (req, res, next) => {
    const done = (error?: unknown) => {
      if (!isUnauthenticated(error)) return next(error);
      budget.failed(req, res, error).then(next, next);
    };
    try {
      void Promise.resolve(authenticate(req, res, done)).catch(done);
    } catch (error) {
      done(error);
    }
  };
}

/**
 * Logs once when a request carries X-Forwarded-For while TRUST_PROXY is unset: the service then sits behind a
 * proxy but counts every client behind it as the proxy's one address (one failed-authentication budget, one
 * recipient-link budget for all). Returns undefined when TRUST_PROXY is set.
 */
export function forwardedForWarning(
  trustProxy: boolean | number | string[] | undefined,
  logger: Logger,
): ((req: Request) => void) | undefined {
  if (
    trustProxy !== undefined &&
    trustProxy !== false &&
    trustProxy !== 0 &&
    !(Array.isArray(trustProxy) && trustProxy.length === 0)
  )
    return undefined;
  let warned = false;
  return (req) => {
    if (warned || req.headers['x-forwarded-for'] === undefined) return;
    warned = true;
    logger.warn(
      { peer: req.socket.remoteAddress },
      "requests carry X-Forwarded-For but TRUST_PROXY is not set: every client behind that proxy counts as its address (one budget of failed authentications for all of them); set TRUST_PROXY to the proxies' addresses or hop count",
    );
  };
}

/**
 * The client's address as every per-address limit counts it: req.ip follows Express's `trust proxy` (set from
 * TRUST_PROXY), and IPv6 addresses count by their /56.
 */
export const clientAddress = (req: Request): string => ipKeyGenerator(req.ip ?? req.socket.remoteAddress ?? 'unknown');
