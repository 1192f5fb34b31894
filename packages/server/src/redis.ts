import type { createClient } from '@redis/client';
import type { Store } from 'express-rate-limit';
import type { RedisStore, RedisReply } from 'rate-limit-redis';
import type { Logger } from './observability/logger';

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
  // Loaded only with REDIS_URL set (a process counting in memory never holds the Redis client).
  /* eslint-disable @typescript-eslint/no-require-imports */
  const redis = require('@redis/client') as { createClient: typeof createClient };
  const { RedisStore: RedisStoreClass } = require('rate-limit-redis') as { RedisStore: typeof RedisStore };
  /* eslint-enable @typescript-eslint/no-require-imports */
  const client = redis.createClient({
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
      new RedisStoreClass({ prefix, sendCommand: (...args: string[]) => client.sendCommand<RedisReply>(args) }),
    async close() {
      if (client.isOpen) await client.close();
    },
  };
}
