import path from 'node:path';
import { DumpError, dumpDatabase, recountDatabase, restoreDatabase, type TableRows } from './dump';
import { parseEncryptionKeys, SecretKeyError } from './encryption-keys';
import { type DatabaseTarget, describeDatabase } from './target';

/**
 * `pnpm db:dump <file> [--force]`, `pnpm db:restore <file> [--force]` and `pnpm db:recount`, on the database the
 * server would use: DATABASE_URL (PostgreSQL) when set, else the embedded PGlite in PGLITE_DIR (default
 * .data/pglite), with ENCRYPTION_KEYS as the server reads them.
 * See dump.ts for the file and what a restore checks, counts.ts for the counts.
 */
const USAGE = 'usage: pnpm db:dump <file> [--force] | pnpm db:restore <file> [--force] | pnpm db:recount';

async function run(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  if (command === 'recount') {
    if (rest.length > 0) throw new DumpError(USAGE);
    const database = databaseFromEnvironment(process.env);
    const started = Date.now();
    const fixed = await recountDatabase(database);
    process.stdout.write(
      `Recounted ${describeDatabase(database)} in ${Date.now() - started} ms: ` +
        (fixed === 0 ? 'every count was right.\n' : `${fixed} counter rows were wrong and are now right.\n`),
    );
    return;
  }
  const force = rest.includes('--force');
  const files = rest.filter((arg) => arg !== '--force');
  if ((command !== 'dump' && command !== 'restore') || files.length !== 1) throw new DumpError(USAGE);
  // pnpm runs scripts from the repository root; a relative path means the directory the command was typed in.
  const file = path.resolve(process.env.INIT_CWD ?? process.cwd(), files[0]!);
  const database = databaseFromEnvironment(process.env);
  const where = describeDatabase(database);
  if (command === 'dump') {
    const started = Date.now();
    const tables = await dumpDatabase(database, file, { force });
    print(`Dumped ${where} to ${file} in ${Date.now() - started} ms:`, tables);
    return;
  }
  const started = Date.now();
  const result = await restoreDatabase(database, file, { force });
  const level = result.header.migrations.at(-1)?.name;
  print(
    `Restored ${file} (from ${result.header.source}, ${result.header.createdAt}, migrations up to ${level}) into ${where} in ${Date.now() - started} ms` +
      (result.migratedAfter.length > 0 ? `, then applied ${result.migratedAfter.join(', ')}` : '') +
      (result.recounted > 0 ? `, then corrected ${result.recounted} counter rows` : '') +
      ':',
    result.tables,
  );
}

/** The repository root (prisma/{src,dist}/ → ../..): PGLITE_DIR's default is the server's. */
const repoRoot = path.resolve(__dirname, '../..');

/** The three variables of the server's configuration that say where its data is and how it is sealed. */
function databaseFromEnvironment(env: NodeJS.ProcessEnv): DatabaseTarget {
  const encryptionKeys = env.ENCRYPTION_KEYS ? { encryptionKeys: parseEncryptionKeys(env.ENCRYPTION_KEYS) } : {};
  if (env.DATABASE_URL) return { kind: 'postgres', url: env.DATABASE_URL, ...encryptionKeys };
  return {
    kind: 'pglite',
    dataDir: path.resolve(env.PGLITE_DIR || path.join(repoRoot, '.data/pglite')),
    ...encryptionKeys,
  };
}

function print(title: string, tables: TableRows[]): void {
  const width = Math.max(...tables.map((t) => t.table.length), 5);
  const lines = tables.map(({ table, rows }) => `  ${table.padEnd(width)}  ${String(rows).padStart(9)}`);
  const sum = tables.reduce((total, t) => total + t.rows, 0);
  process.stdout.write(
    `${title}\n  ${'table'.padEnd(width)}  ${'rows'.padStart(9)}\n${lines.join('\n')}\n  ${'total'.padEnd(width)}  ${String(sum).padStart(9)}\n`,
  );
}

run(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof DumpError || error instanceof SecretKeyError)
    process.stderr.write(`works-api: ${error.message}\n`);
  else console.error(error);
  process.exit(1);
});
