import type { Migration } from './migrate';
import {
  COPY_LINE,
  DUMP_FORMAT,
  DumpError,
  type DumpHeader,
  HEADER,
  IGNORED_LINE,
  lines,
  MIGRATIONS_TABLE,
  quoteIdent,
  splitColumns,
  TRAILER,
  unquote,
} from './dump-format';

// Reading a dump file for a restore: a first pass for its header, trailer and migration level, a second for its rows.

/** Rows are sent to the target in chunks of about this size, so a large table never sits in memory whole. */
const LOAD_CHUNK_BYTES = 8 * 1024 * 1024;

interface Scan {
  header?: DumpHeader;
  /** From the trailer; absent in a plain pg_dump file. */
  rows?: Record<string, number>;
  /** `_prisma_migrations` rows of a plain pg_dump file: (name, checksum) pairs. */
  migrationRows: Array<{ name: string; checksum: string }>;
}

/** A first pass over the file: its header, trailer and, for a pg_dump file, its migration history. */
export async function scanDump(file: string): Promise<Scan> {
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
export function migrationLevel(scan: Scan, known: Migration[]): Migration[] {
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

/** Second pass: each COPY block's rows, in chunks, in file order (tables come in foreign-key order). */
export async function loadBlocks(
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
