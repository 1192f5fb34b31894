import { createHash, randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import { Client } from 'pg';

/** prisma/migrations: one folder per migration, written by `pnpm db:migration` (see docs/development.md). */
export const migrationsDir = path.resolve(__dirname, '../migrations');

/** The little a migration needs from a connection: run a script, run a query. */
export interface SqlSession {
  exec(sql: string): Promise<void>;
  query<Row>(sql: string, params?: unknown[]): Promise<Row[]>;
  /**
   * Called once the migrations have changed the schema, for a driver that reads the catalog's types when it
   * connects. PGlite does: it learns how to send and read each array type (an enum's `request_status[]`) when it
   * opens, so the types a first run's migrations create after that would be sent as plain text ("malformed array
   * literal") until the next open. node-postgres needs nothing: it never reads the catalog (it writes any array
   * as an array literal, and returns what it has no parser for as text), on a new database as on an old one.
   */
  schemaChanged?(): Promise<void>;
}

export interface Migration {
  name: string;
  sql: string;
  checksum: string;
}

export function readMigrations(dir = migrationsDir): Migration[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort()
    .map((name) => {
      const sql = readFileSync(path.join(dir, name, 'migration.sql'), 'utf8');
      return { name, sql, checksum: createHash('sha256').update(sql).digest('hex') };
    });
}

// Prisma's own history table, so that `prisma migrate status` reads the same history.
const HISTORY_TABLE = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
  "id" VARCHAR(36) PRIMARY KEY NOT NULL,
  "checksum" VARCHAR(64) NOT NULL,
  "finished_at" TIMESTAMPTZ,
  "migration_name" VARCHAR(255) NOT NULL,
  "logs" TEXT,
  "rolled_back_at" TIMESTAMPTZ,
  "started_at" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "applied_steps_count" INTEGER NOT NULL DEFAULT 0
)`;

// The advisory lock id Prisma's migrate uses: server processes starting together apply each migration once.
const MIGRATION_LOCK = 72707369;

/**
 * Applies the migrations not yet applied, each in its own transaction, like `prisma migrate deploy`. We run it
 * in-process rather than through the CLI because the CLI exits without closing an embedded PGlite, which leaves
 * its data folder unreadable. Returns the names it applied.
 */
export async function applyMigrations(session: SqlSession, migrations = readMigrations()): Promise<string[]> {
  await session.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
  try {
    await session.exec(HISTORY_TABLE);
    const history = await session.query<{ migration_name: string; checksum: string }>(
      'SELECT migration_name, checksum FROM "_prisma_migrations" WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL',
    );
    const applied = new Map(history.map((row) => [row.migration_name, row.checksum]));
    const done: string[] = [];
    for (const migration of migrations) {
      const checksum = applied.get(migration.name);
      if (checksum !== undefined) {
        if (checksum !== migration.checksum)
          throw new Error(`migration ${migration.name} was edited after it was applied`);
        continue;
      }
      await session.exec('BEGIN');
      try {
        await session.exec(migration.sql);
        await session.query(
          `INSERT INTO "_prisma_migrations" (id, checksum, finished_at, migration_name, applied_steps_count)
           VALUES ($1, $2, now(), $3, 1)`,
          [randomUUID(), migration.checksum, migration.name],
        );
        await session.exec('COMMIT');
      } catch (error) {
        await session.exec('ROLLBACK');
        throw new Error(`migration ${migration.name} failed: ${(error as Error).message}`, { cause: error });
      }
      done.push(migration.name);
    }
    if (done.length > 0) await session.schemaChanged?.();
    return done;
  } finally {
    await session.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
  }
}

export function pgliteSession(pglite: PGlite): SqlSession {
  return {
    exec: async (sql) => void (await pglite.exec(sql)),
    query: async <Row>(sql: string, params?: unknown[]) => (await pglite.query<Row>(sql, params)).rows,
    // What PGlite does when it opens: the database now reads as one opened already migrated.
    schemaChanged: () => pglite.refreshArrayTypes(),
  };
}

/** A short-lived PostgreSQL connection: migrations run outside the Prisma pool. */
export async function withPgSession<T>(url: string, work: (session: SqlSession) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return await work({
      exec: async (sql) => void (await client.query(sql)),
      query: async <Row>(sql: string, params?: unknown[]) => (await client.query(sql, params)).rows as Row[],
    });
  } finally {
    await client.end();
  }
}
