import { once } from 'node:events';
import {
  constants,
  createReadStream,
  createWriteStream,
  existsSync,
  linkSync,
  lstatSync,
  openSync,
  renameSync,
  rmSync,
  unlinkSync,
} from 'node:fs';
import { createInterface } from 'node:readline';
import { PGlite } from '@electric-sql/pglite';
import { PGLITE_EXTENSIONS } from './pglite-extensions';
import { Client } from 'pg';
import { from as copyFrom, to as copyTo } from 'pg-copy-streams';
import type { DatabaseTarget } from './target';
import { recountRows } from './counts';
import { applyMigrations, type Migration, readMigrations, type SqlSession } from './migrate';
import { lockPgliteFolder, type PgliteLock } from './pglite-lock';
import { SEALED_LIKE, secretBoxFor } from './secret-box';

/**
 * `pnpm db:dump <file>` and `pnpm db:restore <file>`: the data of a works-api database, moved between PGlite and
 * PostgreSQL in any direction.
 *
 * The file is the data-only plain format of `pg_dump --data-only`: a `COPY <table> (<columns>) FROM stdin;`
 * block per table in PostgreSQL's own COPY text encoding (PostgreSQL writes it, PostgreSQL reads it back, so every
 * value survives exactly), plus a header that records the migrations the data was written at and a trailer with
 * every table's row count (a file without it is truncated, and refused). The schema is not in the file: a
 * restore creates it with the migrations, up to the dump's level, loads the rows, then applies the newer
 * migrations, so a dump taken on one release restores on the next and PGlite's PostgreSQL 17 and a PostgreSQL
 * 15 server read each other's files. No pg_dump binary is needed (a clean clone has only Node); a PostgreSQL
 * user's own `pg_dump --data-only` output (or @electric-sql/pglite-tools' pg_dump) reads back the same way, the
 * migration level then coming from its `_prisma_migrations` block.
 */
export const DUMP_FORMAT = 1;
const HEADER = '-- works-api-dump: ';
const TRAILER = '-- works-api-dump-end: ';
const MIGRATIONS_TABLE = '_prisma_migrations';
/** Rows are sent to the target in chunks of about this size, so a large table never sits in memory whole. */
const LOAD_CHUNK_BYTES = 8 * 1024 * 1024;

export interface DumpHeader {
  format: number;
  createdAt: string;
  source: 'pglite' | 'postgres';
  migrations: Array<{ name: string; checksum: string }>;
  /**
   * Webhook signing secrets and stored replays are sealed (secret-box.ts): a restore needs ENCRYPTION_KEYS
   * holding every key named here.
   */
  secrets: { sealedWith: 'aes-256-gcm'; keyIds: string[] };
}

export interface TableRows {
  table: string;
  rows: number;
}

/** A database as dump and restore see it: statements, and COPY in both directions. */
interface Session extends SqlSession {
  copyOut(sql: string, write: (chunk: Buffer) => Promise<void>): Promise<void>;
  copyIn(sql: string, data: Buffer): Promise<void>;
  close(): Promise<void>;
}

export class DumpError extends Error {
  override name = 'DumpError';
}

/**
 * Writes every table's rows to `file` (mode 0600: it holds API key hashes and sealed secrets). On PostgreSQL the
 * whole dump reads one REPEATABLE READ snapshot, so it is consistent while servers keep writing; an embedded
 * folder must not be held by a running server.
 *
 * The rows go to `<file>.partial`, created exclusively (never an existing file, never through a symlink, so
 * neither its mode nor its target is someone else's choice), which takes the name `file` once complete. An
 * existing `file` (a symlink included) is kept unless `force`; with `force` it is replaced, never written through.
 */
export async function dumpDatabase(
  target: DatabaseTarget,
  file: string,
  { force = false }: { force?: boolean } = {},
): Promise<TableRows[]> {
  if (!force && pathExists(file)) throw new DumpError(`${file} exists: pass --force to replace it`);
  const partial = `${file}.partial`;
  if (pathExists(partial)) {
    if (!force)
      throw new DumpError(
        `${partial} exists (a dump that did not finish, or another file): remove it, or pass --force to replace it`,
      );
    unlinkSync(partial); // a symlink itself, not what it points to
  }
  const session = await openSession(target, 'dump');
  let created = false;
  try {
    await session.exec('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    const migrations = await appliedMigrations(session);
    if (migrations.length === 0) throw new DumpError('this database has no works-api migrations: nothing to dump');
    const tables = await tablesInLoadOrder(session);
    const header: DumpHeader = {
      format: DUMP_FORMAT,
      createdAt: new Date().toISOString(),
      source: target.kind,
      migrations,
      secrets: { sealedWith: 'aes-256-gcm', keyIds: await sealingKeyIds(session) },
    };
    const out = createWriteStream(partial, { fd: createExclusively(partial), flush: true });
    created = true;
    const write = async (text: string | Buffer) => {
      if (!out.write(text)) await once(out, 'drain');
    };
    await write(
      `-- works-api database dump: the rows of every table, in PostgreSQL's COPY format (as pg_dump --data-only).\n` +
        `-- Restore it with \`pnpm db:restore <file>\`, which creates the schema with the migrations named below.\n` +
        `${HEADER}${JSON.stringify(header)}\n\nSET client_encoding = 'UTF8';\nSET standard_conforming_strings = on;\n\n`,
    );
    const counts: TableRows[] = [];
    for (const { name, columns, key } of tables) {
      const columnList = columns.map(quoteIdent).join(', ');
      await write(`COPY public.${quoteIdent(name)} (${columnList}) FROM stdin;\n`);
      let rows = 0;
      await session.copyOut(
        `COPY (SELECT ${columnList} FROM public.${quoteIdent(name)} ORDER BY ${key.map(quoteIdent).join(', ')}) TO STDOUT`,
        async (chunk) => {
          for (const byte of chunk) if (byte === 0x0a) rows++;
          await write(chunk);
        },
      );
      await write('\\.\n\n');
      counts.push({ table: name, rows });
    }
    const rowsByTable = Object.fromEntries(counts.map(({ table, rows }) => [table, rows]));
    await write(`${TRAILER}${JSON.stringify({ rows: rowsByTable })}\n`);
    out.end();
    await once(out, 'finish');
    await session.exec('COMMIT');
    moveInto(partial, file, force);
    return counts;
  } catch (error) {
    if (created) rmSync(partial, { force: true });
    throw error;
  } finally {
    await session.close();
  }
}

/** True when `file` names anything, a dangling symlink included. */
function pathExists(file: string): boolean {
  try {
    lstatSync(file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}

/** A new file, mode 0600, opened for writing; fails if the name exists (a symlink included). */
function createExclusively(file: string): number {
  const { O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW } = constants;
  try {
    return openSync(file, O_WRONLY | O_CREAT | O_EXCL | (O_NOFOLLOW ?? 0), 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST')
      throw new DumpError(`${file} appeared while the dump started: another dump to the same file?`);
    throw error;
  }
}

/**
 * The complete dump takes its name. Without `force` by a hard link, which fails if the name exists (even one
 * made since the check at the start), then the partial name goes; with `force` by a rename, which replaces what
 * is there (a symlink is replaced, not followed).
 */
function moveInto(partial: string, file: string, force: boolean): void {
  if (force) return renameSync(partial, file);
  try {
    linkSync(partial, file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') throw new DumpError(`${file} exists: pass --force to replace it`);
    // A file system without hard links: the check at the start stands.
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP') throw error;
    if (pathExists(file)) throw new DumpError(`${file} exists: pass --force to replace it`);
    return renameSync(partial, file);
  }
  unlinkSync(partial);
}

/** The keys that sealed the secrets in the data (read in the dump's snapshot). */
async function sealingKeyIds(session: Session): Promise<string[]> {
  const rows = await session.query<{ id: string }>(
    `SELECT DISTINCT split_part(value, ':', 3) AS id FROM (
       SELECT secret AS value FROM public.webhook_endpoints
       UNION ALL SELECT previous_secret FROM public.webhook_endpoints
       UNION ALL SELECT body FROM public.idempotency_keys) sealed
     WHERE value LIKE '${SEALED_LIKE}' ORDER BY id`,
  );
  return rows.map((row) => row.id);
}

/** A restore into a deployment without the dump's keys would leave secrets nobody can open: refuse it first. */
function checkKeys(header: DumpHeader | undefined, target: DatabaseTarget): void {
  const needed = header?.secrets.keyIds ?? [];
  if (needed.length === 0) return;
  const box = secretBoxFor(target);
  const missing = needed.filter((id) => !box?.holds(id));
  if (missing.length > 0)
    throw new DumpError(
      `the dump's secrets are sealed with key ${missing.join(', ')}, which this deployment's ENCRYPTION_KEYS does ` +
        `not hold: set ENCRYPTION_KEYS to include the keys of the deployment that wrote the dump (for an embedded ` +
        `database, the contents of <PGLITE_DIR>.key), then restore again`,
    );
}

export interface RestoreOptions {
  /** Replace the data a target already holds (every table emptied first, in the same transaction). */
  force?: boolean;
}

export interface RestoreResult {
  header: Pick<DumpHeader, 'migrations' | 'createdAt'> & { source: DumpHeader['source'] | 'pg_dump' };
  /** Migrations applied after the load, to bring the dump's data up to this release. */
  migratedAfter: string[];
  /** Counter rows the recount after the load corrected (0 for a dump taken by `pnpm db:dump`). */
  recounted: number;
  tables: TableRows[];
}

/**
 * Loads a dump into `target`: refuses a target that holds data (unless `force`), brings its schema to the
 * dump's migration level, loads every table in one transaction (user triggers off while it loads: the rows
 * are already what the triggers would have made), applies the newer migrations, rebuilds the kept counts from
 * the rows (a dump edited by hand, or a plain pg_dump taken without one snapshot, may carry counts that do not
 * match its rows), then counts every table and checks the counts against the dump's.
 */
export async function restoreDatabase(
  target: DatabaseTarget,
  file: string,
  options: RestoreOptions = {},
): Promise<RestoreResult> {
  if (!existsSync(file)) throw new DumpError(`no such file: ${file}`);
  const known = readMigrations();
  const scan = await scanDump(file);
  const level = migrationLevel(scan, known);
  checkKeys(scan.header, target);
  const session = await openSession(target, 'restore');
  try {
    const applied = await appliedMigrations(session).catch(() => []);
    const ahead = applied.filter((migration) => !level.some((m) => m.name === migration.name));
    if (ahead.length > 0)
      throw new DumpError(
        `the target database is already migrated past the dump (it has ${ahead.map((m) => m.name).join(', ')}, ` +
          `the dump stops at ${level.at(-1)!.name}): restore into a new, empty database ` +
          `(createdb, or another PGLITE_DIR), whose schema the restore creates`,
      );
    await applyMigrations(session, level);
    const tables = await tablesInLoadOrder(session);
    const holding: string[] = [];
    for (const { name } of tables) {
      const [row] = await session.query<{ any: boolean }>(
        `SELECT EXISTS (SELECT 1 FROM public.${quoteIdent(name)}) AS any`,
      );
      if (row?.any) holding.push(name);
    }
    if (holding.length > 0 && !options.force)
      throw new DumpError(
        `the target database already holds data (in ${holding.join(', ')}): restore into an empty database, ` +
          'or pass --force to replace its data with the dump',
      );

    await session.exec('BEGIN');
    try {
      if (holding.length > 0)
        await session.exec(`TRUNCATE ${tables.map((t) => `public.${quoteIdent(t.name)}`).join(', ')}`);
      const tableNames = new Set(tables.map((t) => t.name));
      for (const table of tables)
        await session.exec(`ALTER TABLE public.${quoteIdent(table.name)} DISABLE TRIGGER USER`);
      await loadBlocks(file, async (table, columns, data) => {
        if (table === MIGRATIONS_TABLE) return; // the target's own history, written by its migrator
        if (!tableNames.has(table)) throw new DumpError(`the dump has a table this release does not know: ${table}`);
        await session.copyIn(`COPY public.${quoteIdent(table)} (${columns}) FROM STDIN`, data);
      });
      for (const table of tables)
        await session.exec(`ALTER TABLE public.${quoteIdent(table.name)} ENABLE TRIGGER USER`);
      await session.exec('COMMIT');
    } catch (error) {
      await session.exec('ROLLBACK').catch(() => undefined);
      throw error;
    }
    const migratedAfter = await applyMigrations(session, known);
    const recounted = await recountRows(session);
    const counts: TableRows[] = [];
    for (const { name } of await tablesInLoadOrder(session)) {
      const [row] = await session.query<{ rows: number }>(
        `SELECT count(*)::int AS rows FROM public.${quoteIdent(name)}`,
      );
      counts.push({ table: name, rows: Number(row?.rows ?? 0) });
    }
    for (const [table, rows] of Object.entries(scan.rows ?? {})) {
      const loaded = counts.find((c) => c.table === table)?.rows;
      if (loaded !== undefined && loaded < rows)
        throw new DumpError(`${table}: the dump has ${rows} rows, the database ${loaded} after the restore`);
    }
    return {
      header: {
        migrations: level.map(({ name, checksum }) => ({ name, checksum })),
        source: scan.header?.source ?? 'pg_dump',
        createdAt: scan.header?.createdAt ?? 'time not recorded',
      },
      migratedAfter,
      recounted,
      tables: counts,
    };
  } finally {
    await session.close();
  }
}

/**
 * `pnpm db:recount`: rebuilds every kept count (counts.ts) of the database from its rows, after bringing it to
 * this release's migrations; returns how many counter rows were wrong. Writers wait while it runs.
 */
export async function recountDatabase(target: DatabaseTarget): Promise<number> {
  const session = await openSession(target, 'recount');
  try {
    await applyMigrations(session);
    return await recountRows(session);
  } finally {
    await session.close();
  }
}

interface Scan {
  header?: DumpHeader;
  /** From the trailer; absent in a plain pg_dump file. */
  rows?: Record<string, number>;
  /** `_prisma_migrations` rows of a plain pg_dump file: (name, checksum) pairs. */
  migrationRows: Array<{ name: string; checksum: string }>;
}

/** A first pass over the file: its header, trailer and, for a pg_dump file, its migration history. */
async function scanDump(file: string): Promise<Scan> {
  const scan: Scan = { migrationRows: [] };
  let migrationColumns: string[] | undefined;
  let sawTrailer = false;
  for await (const line of lines(file)) {
    if (line.startsWith(HEADER)) scan.header = JSON.parse(line.slice(HEADER.length)) as DumpHeader;
    else if (line.startsWith(TRAILER)) {
      scan.rows = (JSON.parse(line.slice(TRAILER.length)) as { rows: Record<string, number> }).rows;
      sawTrailer = true;
    } else if (migrationColumns) {
      if (line === '\\.') migrationColumns = undefined;
      else {
        const values = line.split('\t');
        const name = values[migrationColumns.indexOf('migration_name')]!;
        const finished = values[migrationColumns.indexOf('finished_at')];
        const rolledBack = values[migrationColumns.indexOf('rolled_back_at')];
        if (finished !== '\\N' && rolledBack === '\\N')
          scan.migrationRows.push({ name, checksum: values[migrationColumns.indexOf('checksum')]! });
      }
    } else {
      const copy = COPY_LINE.exec(line);
      if (copy && unquote(copy[1]!) === MIGRATIONS_TABLE) migrationColumns = splitColumns(copy[2]!);
    }
  }
  if (scan.header && scan.header.format !== DUMP_FORMAT)
    throw new DumpError(`this dump is in format ${scan.header.format}; this release reads format ${DUMP_FORMAT}`);
  if (scan.header && !sawTrailer)
    throw new DumpError('the dump is incomplete (it has no end line): it was cut off while being written or copied');
  return scan;
}

/** The migrations the dump's data was written at: a prefix of this release's, with the same contents. */
function migrationLevel(scan: Scan, known: Migration[]): Migration[] {
  const recorded = scan.header?.migrations ?? scan.migrationRows;
  if (recorded.length === 0)
    throw new DumpError('the file records no works-api migrations: it is not a works-api dump');
  const byName = new Map(known.map((m) => [m.name, m]));
  for (const { name, checksum } of recorded) {
    const mine = byName.get(name);
    if (!mine) throw new DumpError(`the dump was written by a newer release (migration ${name}): upgrade first`);
    if (mine.checksum !== checksum) throw new DumpError(`migration ${name} differs between the dump and this release`);
  }
  const names = new Set(recorded.map((m) => m.name));
  const level = known.filter((m) => names.has(m.name));
  if (known.slice(0, level.length).some((m) => !names.has(m.name)))
    throw new DumpError('the dump skips a migration this release has before its last one: it cannot be restored here');
  return level;
}

const COPY_LINE = /^COPY (?:(?:public|"public")\.)?("(?:[^"]|"")+"|\w+) \((.*)\) FROM stdin;$/;
/**
 * pg_dump's plain output around the data: comments, settings, and psql's `\restrict` guard (pg_dump 17.6, 16.10,
 * 15.14 and later); nothing that changes anything.
 */
const IGNORED_LINE = /^(--.*|SET \w+ = .*;|SELECT pg_catalog\.set_config\(.*\);|\\(un)?restrict \w+|)$/;

/** Second pass: each COPY block's rows, in chunks, in file order (tables come in foreign-key order). */
async function loadBlocks(
  file: string,
  load: (table: string, columns: string, data: Buffer) => Promise<void>,
): Promise<void> {
  let block: { table: string; columns: string } | undefined;
  let pending: string[] = [];
  let size = 0;
  const flush = async () => {
    if (!block || pending.length === 0) return;
    await load(block.table, block.columns, Buffer.from(pending.join(''), 'utf8'));
    pending = [];
    size = 0;
  };
  for await (const line of lines(file)) {
    if (block) {
      if (line === '\\.') {
        await flush();
        block = undefined;
        continue;
      }
      pending.push(`${line}\n`);
      size += line.length + 1;
      if (size >= LOAD_CHUNK_BYTES) await flush();
      continue;
    }
    const copy = COPY_LINE.exec(line);
    if (copy) {
      block = { table: unquote(copy[1]!), columns: splitColumns(copy[2]!).map(quoteIdent).join(', ') };
      continue;
    }
    if (!IGNORED_LINE.test(line))
      throw new DumpError(`the dump holds a statement restore does not run: ${line.slice(0, 120)}`);
  }
  if (block) throw new DumpError(`the dump ends inside the rows of ${block.table}`);
}

function lines(file: string): AsyncIterable<string> {
  return createInterface({ input: createReadStream(file, { encoding: 'utf8' }), crlfDelay: Infinity });
}

const quoteIdent = (name: string): string => `"${name.replaceAll('"', '""')}"`;
const unquote = (name: string): string => (name.startsWith('"') ? name.slice(1, -1).replaceAll('""', '"') : name);
const splitColumns = (list: string): string[] =>
  (list.match(/"(?:[^"]|"")+"|[^,\s]+/g) ?? []).map((column) => unquote(column));

async function appliedMigrations(session: SqlSession): Promise<Array<{ name: string; checksum: string }>> {
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
async function tablesInLoadOrder(session: SqlSession): Promise<TableInfo[]> {
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

async function openSession(target: DatabaseTarget, purpose: 'dump' | 'restore' | 'recount'): Promise<Session> {
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
