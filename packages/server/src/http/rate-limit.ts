import { createClient } from '@redis/client';
import type { Request, RequestHandler } from 'express';
import { ipKeyGenerator, MemoryStore, rateLimit, type Store } from 'express-rate-limit';
import { RedisStore, type RedisReply } from 'rate-limit-redis';
import { httpProblem } from './problem-codes';
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
        httpProblem(
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

export interface UnauthenticatedBudgetOptions {
  /** Failed authentications per minute per client address (RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE). */
  perMinute: number;
  /** Where the counts live (Redis, shared); in this process when absent. */
  store?: Store;
  logger: Logger;
  onRejected?: (budget: RateLimitBudget) => void;
}

/** An address's blocks are pruned once this many are held, so a spray of addresses cannot grow the map for long. */
const MAX_BLOCKED_ADDRESSES = 10_000;

/**
 * A budget of failed authentications (401: missing, malformed, unknown or revoked API key, wrong operator token)
 * per client address, checked BEFORE authentication: once an address has spent it, every request from it is
 * refused with 429 until the window ends, without looking its key up, so a stream of invented keys costs no
 * database lookups and the operator token cannot be guessed at speed. Requests that authenticate spend nothing.
 * The address is the connection's peer, or what X-Forwarded-For says through the proxies TRUST_PROXY names;
 * IPv6 addresses count by their /56 (one customer's network), as express-rate-limit advises.
 *
 * Counting happens when a 401 is sent; the refusal is decided from this process's memory of the addresses over
 * budget, so a request that authenticates costs no store round trip. With a shared store (Redis) another process
 * learns of an address at its own first failure from it.
 */
export function unauthenticatedBudget({
  perMinute,
  store,
  logger,
  onRejected,
}: UnauthenticatedBudgetOptions): RequestHandler {
  const counts: Store = store ?? new MemoryStore();
  void Promise.resolve(counts.init?.({ windowMs: WINDOW_MS } as Parameters<NonNullable<Store['init']>>[0])).catch(
    (error: unknown) => logger.error({ err: error }, 'rate limit: the unauthenticated budget store failed to start'),
  );
  const blockedUntil = new Map<string, number>();
  const block = (address: string, until: number) => {
    if (blockedUntil.size >= MAX_BLOCKED_ADDRESSES) {
      const now = Date.now();
      for (const [key, end] of blockedUntil) if (end <= now) blockedUntil.delete(key);
    }
    if (blockedUntil.size < MAX_BLOCKED_ADDRESSES) blockedUntil.set(address, until);
  };
  return (req, res, next) => {
    const address = clientAddress(req);
    const until = blockedUntil.get(address);
    if (until !== undefined) {
      const seconds = Math.ceil((until - Date.now()) / 1000);
      if (seconds > 0) {
        onRejected?.('unauthenticated');
        res.setHeader('Retry-After', String(seconds));
        return next(
          httpProblem(
            'rate_limited',
            `Too many requests from your address failed authentication (${perMinute} a minute); retry after ${seconds} seconds.`,
          ),
        );
      }
      blockedUntil.delete(address);
    }
    res.once('finish', () => {
      if (res.statusCode !== 401) return;
      Promise.resolve(counts.increment(address)).then(
        ({ totalHits, resetTime }) => {
          if (totalHits >= perMinute) block(address, resetTime?.getTime() ?? Date.now() + WINDOW_MS);
        },
        (error: unknown) => logger.warn({ err: error }, 'rate limit: counting a failed authentication failed'),
      );
    });
    next();
  };
}

/**
 * The client's address as every per-address limit counts it: req.ip follows Express's `trust proxy` (set from
 * TRUST_PROXY), and IPv6 addresses count by their /56.
 */
export const clientAddress = (req: Request): string => ipKeyGenerator(req.ip ?? req.socket.remoteAddress ?? 'unknown');

export interface RedisConnection {
  /** A new store over this connection (one per limiter: express-rate-limit refuses a shared store). */
  store(prefix: string): Store;
  close(): Promise<void>;
}

/**
 * Connects to Redis for the rate-limit counters, so that every server process counts against one budget per
 * key. Fails at start-up if Redis cannot be reached; afterwards it reconnects on its own, and commands fail fast
 * (no offline queue) while it is away, so requests are not held up.
 */
export async function connectRedis(url: string, logger: Logger): Promise<RedisConnection> {
  let connected = false;
  const client = createClient({
    url,
    disableOfflineQueue: true,
    socket: {
      connectTimeout: 5_000,
      reconnectStrategy: (retries, cause) =>
        connected ? Math.min(100 * 2 ** retries, 5_000) : retries >= 2 ? cause : 200,
    },
  });
  client.on('error', (error: unknown) => {
    if (connected) logger.warn({ err: error }, 'Redis connection error (rate limits pass until it is back)');
  });
  await client.connect();
  connected = true;
  return {
    store: (prefix) =>
      new RedisStore({ prefix, sendCommand: (...args: string[]) => client.sendCommand<RedisReply>(args) }),
    async close() {
      if (client.isOpen) await client.close();
    },
  };
}
