import { mkdirSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { PrismaPg } from '@prisma/adapter-pg';
import { Pool } from 'pg';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import { PrismaClient } from './generated/client';
import { applyMigrations, pgliteSession, withPgSession } from './migrate';
import { attachPlainStatement } from './plain-statement';

export type Db = PrismaClient;

/**
 * Where the data lives: a PostgreSQL server, or an embedded PGlite in a folder (in memory when none is given;
 * `loadDataDir` starts it from a dump, which tests use to skip initdb).
 */
export type DatabaseTarget =
  | { kind: 'postgres'; url: string }
  | { kind: 'pglite'; dataDir?: string; loadDataDir?: Blob };

export interface Database {
  readonly prisma: Db;
  readonly kind: DatabaseTarget['kind'];
  /** The migrations this start applied. */
  readonly migrated: string[];
  /** Resolves when the database answers a trivial query. */
  ping(): Promise<void>;
  /** Closes every connection; PGlite flushes and closes its files. Safe to call twice. */
  close(): Promise<void>;
}

/** Opens the database and applies pending migrations before anything else can use it. */
export async function openDatabase(target: DatabaseTarget): Promise<Database> {
  if (target.kind === 'postgres') {
    const migrated = await withPgSession(target.url, (session) => applyMigrations(session));
    // Our own pool, so that plain statements share Prisma's connections.
    const pool = new Pool({ connectionString: target.url });
    // A connection the server drops while idle (restart, terminated backend) is an 'error' on the pool, fatal to
    // the process when nobody listens. Prisma's adapter listens only while Prisma is connected; pg has already
    // discarded the dead connection and the next query opens another, so there is nothing more to do (/readyz
    // reports an outage).
    pool.on('error', () => undefined);
    const prisma = newClient(new PrismaPg(pool));
    attachPlainStatement(prisma, async (text, values) => (await pool.query(text, [...values])).rows);
    await prisma.$connect();
    return databaseOf(prisma, 'postgres', migrated, async () => {
      await prisma.$disconnect();
      await pool.end();
    });
  }
  if (target.dataDir) mkdirSync(target.dataDir, { recursive: true });
  const pglite = new PGlite(target.dataDir, target.loadDataDir ? { loadDataDir: target.loadDataDir } : {});
  const migrated = await applyMigrations(pgliteSession(pglite));
  // pglite-prisma-adapter is typed against an older @prisma/driver-adapter-utils; the runtime contract is the same.
  const prisma = newClient(new PrismaPGlite(pglite) as unknown as PrismaPg);
  attachPlainStatement(prisma, async <Row>(text: string, values: readonly unknown[]) => (await pglite.query<Row>(text, [...values])).rows);
  return databaseOf(prisma, 'pglite', migrated, async () => {
    await prisma.$disconnect();
    await pglite.close();
  });
}

// Errors are turned into problem+json, never printed: 'minimal' also spares the stack trace Prisma otherwise
// captures on every call to point at the caller's line.
const newClient = (adapter: PrismaPg): PrismaClient => new PrismaClient({ adapter, errorFormat: 'minimal' });

function databaseOf(prisma: Db, kind: DatabaseTarget['kind'], migrated: string[], close: () => Promise<void>): Database {
  let closing: Promise<void> | undefined;
  return {
    prisma,
    kind,
    migrated,
    async ping() {
      await prisma.$queryRaw`SELECT 1`;
    },
    close: () => (closing ??= close()),
  };
}
