import { mkdirSync } from 'node:fs';
import type { PGlite as PGliteClass } from '@electric-sql/pglite';
import { PGLITE_EXTENSIONS } from './pglite-extensions';
import { PrismaPg } from '@prisma/adapter-pg';
import type { PrismaPGlite as PrismaPGliteClass } from 'pglite-prisma-adapter';
import type { SqlDriverAdapterFactory } from '@prisma/client/runtime/client';
import { PrismaClient } from './generated/client';
import { applyMigrations, pgliteSession, withPgSession } from './migrate';
import { DatabaseReadOnlyError } from './outage';
import { createPgPool } from './pg-pool';
import { lockPgliteFolder } from './pglite-lock';
import type { Database } from './handle';
import { outboxSignal } from './outbox-signal';
import { loadQueryCompilerFromFile } from './query-compiler';
import { type DriverStatement, preparedName } from './statements/driver';
import { sealAtRest } from './seal-at-rest';
import { type SecretBox, secretBoxFor } from './secret-box';
import type { DatabaseTarget } from './target';

export type { Database, Db } from './handle';
export type { DatabaseTarget } from './target';

export interface OpenDatabaseOptions {
  /**
   * Sees every statement sent outside a transaction, Prisma's and plain ones, with its values, as it is sent, and
   * whether it went as a named prepared statement (PostgreSQL may then run its generic plan): the statement-plans
   * test records what each operation sends, to EXPLAIN it.
   */
  observeStatement?: (text: string, values: readonly unknown[], prepared: boolean) => void;
}

/** Opens the database and applies pending migrations before anything else can use it. */
export async function openDatabase(target: DatabaseTarget, options: OpenDatabaseOptions = {}): Promise<Database> {
  const { observeStatement: observe } = options;
  if (target.kind === 'postgres') {
    const migrated = await withPgSession(target.url, (session) => applyMigrations(session));
    // Our own pool, so that plain statements share Prisma's connections; made to survive outages (pg-pool.ts).
    const pool = createPgPool({
      connectionString: target.url,
      ...(target.statementTimeoutMs && { statement_timeout: target.statementTimeoutMs }),
    });
    if (observe) {
      // Named parameters, not a rest array: see WatchedClient's query (pg-pool.ts).
      const query = pool.query.bind(pool) as (config: unknown, values?: unknown, callback?: unknown) => unknown;
      pool.query = ((
        config: string | { text: string; values?: unknown[]; name?: string },
        values?: unknown[],
        callback?: unknown,
      ) => {
        if (typeof config === 'string') observe(config, values ?? [], false);
        else observe(config.text, config.values ?? [], config.name !== undefined);
        return query(config, values, callback);
      }) as typeof pool.query;
    }
    const prisma = newClient(new PrismaPg(pool));
    const statement: DriverStatement = async <Row>(text: string, values: readonly unknown[], prepared?: boolean) =>
      (
        await (prepared
          ? pool.query({ name: preparedName(text), text, values: [...values] })
          : pool.query(text, [...values]))
      ).rows as Row[];
    await prisma.$connect();
    const box = secretBoxFor(target);
    if (box) {
      await sealAtRest(prisma, box).catch(async (error: unknown) => {
        await prisma.$disconnect();
        await pool.end();
        throw error;
      });
    }
    return handleOf({
      prisma,
      kind: 'postgres',
      statement,
      secrets: box,
      migrated,
      poolStats: () => ({
        total: pool.totalCount,
        idle: pool.idleCount,
        waiting: pool.waitingCount,
        max: pool.options.max ?? 10,
      }),
      close: async () => {
        await prisma.$disconnect();
        await pool.end();
      },
    });
  }
  if (target.dataDir) mkdirSync(target.dataDir, { recursive: true });
  // One process per folder: a second one would silently lose writes (pglite-lock.ts).
  const lock = target.dataDir ? lockPgliteFolder(target.dataDir) : undefined;
  try {
    // Loaded only for the embedded database: a server on PostgreSQL never holds PGlite's modules (about 10 MB).
    /* eslint-disable @typescript-eslint/no-require-imports */
    const { PGlite } = require('@electric-sql/pglite') as { PGlite: typeof PGliteClass };
    const { PrismaPGlite } = require('pglite-prisma-adapter') as { PrismaPGlite: typeof PrismaPGliteClass };
    /* eslint-enable @typescript-eslint/no-require-imports */
    const pglite =
      target.open ??
      new PGlite({
        ...(target.dataDir && { dataDir: target.dataDir }),
        extensions: PGLITE_EXTENSIONS,
        ...(target.loadDataDir && { loadDataDir: target.loadDataDir }),
      });
    const closePglite = () => (target.open ? Promise.resolve() : pglite.close());
    const migrated = await applyMigrations(pgliteSession(pglite));
    if (observe) {
      const query = pglite.query.bind(pglite);
      pglite.query = ((text: string, values?: unknown[], queryOptions?: Parameters<typeof query>[2]) => {
        observe(text, values ?? [], false);
        return query(text, values, queryOptions);
      }) as typeof pglite.query;
    }
    const prisma = newClient(new PrismaPGlite(pglite));
    const statement: DriverStatement = async <Row>(text: string, values: readonly unknown[]) =>
      (await pglite.query<Row>(text, [...values])).rows;
    const box = secretBoxFor(target)!;
    await sealAtRest(prisma, box).catch(async (error: unknown) => {
      await closePglite();
      throw error;
    });
    return handleOf({
      prisma,
      kind: 'pglite',
      statement,
      secrets: box,
      migrated,
      close: async () => {
        await prisma.$disconnect();
        await closePglite();
        lock?.release();
      },
    });
  } catch (error) {
    lock?.release();
    throw error;
  }
}

/**
 * Prisma 7 compiles each query shape into a plan once (in WebAssembly, 0.3–1 ms of CPU) and keeps the plan in an
 * LRU; a hit skips the compile. The server has a few hundred shapes at most (values are parameters, not part of
 * the shape), so Prisma's default of 1,000 keeps every one of them with room to spare, for a few MB. 0 would
 * turn the cache off; we name it so that nobody does by accident.
 */
export const QUERY_PLAN_CACHE_SIZE = 1_000;

// Errors are turned into problem+json, never printed: 'minimal' also spares the stack trace Prisma 7 still captures
// on every call to point at the caller's line (its default outside NODE_ENV=production).
// The search prefixes (a generated column, dozens of strings a row) are for the index only: no read returns them.
function newClient(adapter: SqlDriverAdapterFactory): PrismaClient {
  const client = new PrismaClient({
    adapter,
    errorFormat: 'minimal',
    queryPlanCacheMaxSize: QUERY_PLAN_CACHE_SIZE,
    omit: { work: { searchPrefixes: true }, request: { searchPrefixes: true } },
  }) as unknown as PrismaClient;
  loadQueryCompilerFromFile(client);
  return client;
}

interface HandleParts {
  prisma: PrismaClient;
  kind: DatabaseTarget['kind'];
  statement: DriverStatement;
  secrets: SecretBox | undefined;
  migrated: string[];
  poolStats?: Database['poolStats'];
  close: () => Promise<void>;
}

function handleOf({ close, ...parts }: HandleParts): Database {
  const { prisma } = parts;
  let closing: Promise<void> | undefined;
  const database: Database = {
    ...parts,
    outbox: { webhooks: outboxSignal(), mail: outboxSignal() },
    async ping() {
      // On PostgreSQL the pool refuses connections to a standby, so this mostly fails before it runs; it still
      // catches a session whose server turned read-only since it connected.
      const [row] = await prisma.$queryRaw<Array<{ readOnly: boolean }>>`
        SELECT current_setting('transaction_read_only') = 'on' AS "readOnly"`;
      if (row?.readOnly) throw new DatabaseReadOnlyError();
    },
    close: () => (closing ??= close()),
  };
  return database;
}
