import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { PGLITE_EXTENSIONS } from './pglite-extensions';
import { Client } from 'pg';
import { from as copyFrom, to as copyTo } from 'pg-copy-streams';
import type { DatabaseTarget } from './target';
import type { SqlSession } from './migrate';
import { lockPgliteFolder, type PgliteLock } from './pglite-lock';
import { DumpError, MIGRATIONS_TABLE, unquote } from './dump-format';

// The database side of dump, restore and recount: a session on PostgreSQL or an embedded folder (COPY both ways),
// and what they read from its catalog (the migrations applied, the tables in load order).

/** A database as dump and restore see it: statements, and COPY in both directions. */
export interface Session extends SqlSession {
  copyOut(sql: string, write: (chunk: Buffer) => Promise<void>): Promise<void>;
  copyIn(sql: string, data: Buffer): Promise<void>;
  close(): Promise<void>;
}

export async function openSession(target: DatabaseTarget, purpose: 'dump' | 'restore' | 'recount'): Promise<Session> {
  if (target.kind === 'postgres') {
    const client = new Client({ connectionString: target.url });
    await client.connect();
    return {
      exec: async (sql) => void (await client.query(sql)),
      query: async <Row>(sql: string, params?: unknown[]) => (await client.query(sql, params)).rows as Row[],
      async copyOut(sql, write) {
        const stream = client.query(copyTo(sql));
        for await (const chunk of stream) await write(chunk as Buffer);
      },
      async copyIn(sql, data) {
        const stream = client.query(copyFrom(sql));
        stream.end(data);
        await once(stream, 'finish');
      },
      close: () => client.end(),
    };
  }
  const dataDir = target.dataDir;
  if (!dataDir) throw new DumpError('an embedded database needs a folder (PGLITE_DIR)');
  if (purpose !== 'restore' && !existsSync(dataDir))
    throw new DumpError(`there is no embedded database in ${dataDir} (set PGLITE_DIR, or DATABASE_URL for PostgreSQL)`);
  let lock: PgliteLock;
  try {
    lock = lockPgliteFolder(dataDir);
  } catch (error) {
    throw new DumpError(`cannot ${purpose}: ${(error as Error).message}`);
  }
  try {
    const pglite = new PGlite(dataDir, { extensions: PGLITE_EXTENSIONS });
    await pglite.waitReady;
    return {
      exec: async (sql) => void (await pglite.exec(sql)),
      query: async <Row>(sql: string, params?: unknown[]) => (await pglite.query<Row>(sql, params)).rows,
      schemaChanged: () => pglite.refreshArrayTypes(),
      async copyOut(sql, write) {
        const result = await pglite.query(sql.replace(/TO STDOUT$/, "TO '/dev/blob'"));
        if (result.blob) await write(Buffer.from(await result.blob.arrayBuffer()));
      },
      async copyIn(sql, data) {
        await pglite.query(sql.replace(/FROM STDIN$/, "FROM '/dev/blob'"), [], { blob: new Blob([data]) });
      },
      async close() {
        await pglite.close();
        lock.release();
      },
    };
  } catch (error) {
    lock.release();
    throw error;
  }
}

export async function appliedMigrations(session: SqlSession): Promise<Array<{ name: string; checksum: string }>> {
  const [exists] = await session.query<{ found: boolean }>(
    `SELECT to_regclass('public.${MIGRATIONS_TABLE}') IS NOT NULL AS found`,
  );
  if (!exists?.found) return [];
  return session.query<{ name: string; checksum: string }>(
    `SELECT migration_name AS name, checksum FROM public.${MIGRATIONS_TABLE}
     WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL ORDER BY migration_name`,
  );
}

interface TableInfo {
  name: string;
  columns: string[];
  /** The primary key's columns: rows are written in its order, so two dumps of the same data are the same file. */
  key: string[];
}

/** Every table of the schema but the migration history, referenced tables before the tables that refer to them. */
export async function tablesInLoadOrder(session: SqlSession): Promise<TableInfo[]> {
  const rows = await session.query<{ name: string; columns: string[]; key: string[] | null; refs: string[] | null }>(
    `SELECT c.relname AS name,
       array(SELECT a.attname::text FROM pg_attribute a
             WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
             ORDER BY a.attnum) AS columns,
       array(SELECT a.attname::text FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid
             AND a.attnum = ANY (i.indkey) WHERE i.indrelid = c.oid AND i.indisprimary
             ORDER BY array_position(i.indkey::int2[], a.attnum)) AS key,
       array(SELECT DISTINCT f.confrelid::regclass::text FROM pg_constraint f
             WHERE f.conrelid = c.oid AND f.contype = 'f' AND f.confrelid <> c.oid) AS refs
     FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND c.relname <> $1
     ORDER BY c.relname`,
    [MIGRATIONS_TABLE],
  );
  const byName = new Map(rows.map((row) => [row.name, row]));
  const ordered: TableInfo[] = [];
  const placed = new Set<string>();
  const place = (name: string, path: string[]) => {
    if (placed.has(name) || path.includes(name)) return;
    const row = byName.get(name);
    if (!row) return;
    for (const ref of row.refs ?? []) place(unquote(ref.replace(/^public\./, '')), [...path, name]);
    placed.add(name);
    const key = row.key && row.key.length > 0 ? row.key : row.columns;
    ordered.push({ name, columns: row.columns, key });
  };
  for (const row of rows) place(row.name, []);
  return ordered;
}
