import { Pool, type PoolConfig } from 'pg';

/** How long a request waits for a free connection before it fails (and is answered 503, see outage.ts). */
const CONNECT_TIMEOUT_MS = 5_000;

/**
 * The pg pool Prisma's adapter and our plain statements share, made to ride out a database outage:
 *
 * - A request waits at most CONNECT_TIMEOUT_MS for a connection (pg's default is forever), so requests fail
 *   fast while the server is away instead of piling up.
 * - Idle connections that the server drops are an 'error' on the pool, fatal to the process when nobody listens.
 *   Prisma's adapter listens only while Prisma is connected; pg has already discarded the dead connection and the
 *   next query opens another, so there is nothing more to do (/readyz reports the outage).
 *
 * Connections cut inside an interactive transaction must come back to the pool, or an outage fills it for good:
 * @prisma/adapter-pg 6.19 did not give them back; 7.10 does. test/process/database-outage.test.ts checks it.
 */
export function createPgPool(config: PoolConfig): Pool {
  const pool = new Pool({ connectionTimeoutMillis: CONNECT_TIMEOUT_MS, ...config });
  pool.on('error', () => undefined);
  return pool;
}
