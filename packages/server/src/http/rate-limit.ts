import { createClient } from '@redis/client';
import type { RequestHandler } from 'express';
import { rateLimit, type Store } from 'express-rate-limit';
import { RedisStore, type RedisReply } from 'rate-limit-redis';
import { ProblemError } from '../domain/errors';
import type { Logger } from './logger';

export interface RateLimitOptions {
  /** Requests per minute per API key. */
  perMinute: number;
  /** Where the counters live; in this process when absent (see `redisRateLimitStore`). */
  store?: Store;
  logger: Logger;
  /** Called for every request refused with 429 (metrics). */
  onRejected?: () => void;
}

const WINDOW_MS = 60_000;

/**
 * A budget of requests per minute per API key, after authentication (so the key is known and a stranger cannot
 * spend a partner's budget). Announced in the IETF draft-8 `RateLimit-Policy` and `RateLimit` headers; over it,
 * 429 `rate_limited` with `Retry-After`. Operator routes (ADMIN_TOKEN, no API key) are not limited. If the store
 * fails (Redis down) requests pass rather than fail: the limit protects the service, it must not take it down.
 */
export function rateLimitPerApiKey({ perMinute, store, logger, onRejected }: RateLimitOptions): RequestHandler {
  return rateLimit({
    windowMs: WINDOW_MS,
    limit: perMinute,
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    ...(store && { store }),
    skip: (req) => req.actor === undefined,
    keyGenerator: (req) => req.actor!.apiKeyId,
    handler: (_req, res, next) => {
      onRejected?.();
      next(
        new ProblemError(
          'rate_limited',
          `This API key has used its ${perMinute} requests for this minute; retry after ${String(res.getHeader('Retry-After'))} seconds.`,
        ),
      );
    },
    passOnStoreError: true,
    logger: {
      error: (error, message) => logger.error({ err: error }, message),
      warn: (message) => logger.warn(message),
    },
    // The key is an API key id, never an IP address: the IP-related checks do not apply.
    validate: { ip: false, trustProxy: false, xForwardedForHeader: false, keyGeneratorIpFallback: false },
  });
}

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
