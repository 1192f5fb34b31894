import { once } from 'node:events';
import { createWriteStream, existsSync, rmSync, unlinkSync } from 'node:fs';
import type { DatabaseTarget } from './target';
import { recountRows } from './counts';
import { applyMigrations, readMigrations } from './migrate';
import { SEALED_LIKE, secretBoxFor } from './secret-box';
import {
  DUMP_FORMAT,
  DumpError,
  type DumpHeader,
  HEADER,
  MIGRATIONS_TABLE,
  quoteIdent,
  type TableRows,
  TRAILER,
} from './dump-format';
import { createExclusively, moveInto, pathExists } from './dump-output-file';
import { loadBlocks, migrationLevel, scanDump } from './dump-read';
import { appliedMigrations, openSession, type Session, tablesInLoadOrder } from './dump-session';

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
// The format's names, from the module that defines them, still importable from here (`@works-api/prisma/dump`).
export { DUMP_FORMAT, DumpError, type DumpHeader, type TableRows } from './dump-format';

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

/** The keys that sealed the secrets in the data (read in the dump's snapshot). */
async function sealingKeyIds(session: Session): Promise<string[]> {
  const rows = await session.query<{ id: string }>(
    `SELECT DISTINCT split_part(value, ':', 3) AS id FROM (
       SELECT secret AS value FROM public.webhook_endpoints
       UNION ALL SELECT previous_secret FROM public.webhook_endpoints
       UNION ALL SELECT body FROM public.idempotency_keys
       UNION ALL SELECT result FROM public.idempotency_keys) sealed
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
