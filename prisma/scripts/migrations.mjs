// Compares prisma/schema.prisma with the database prisma/migrations produce, through the Prisma 6.19 CLI
// (see ../prisma6.config.mjs for why 6.19). Used by `pnpm db:migration` (write the difference as a new migration)
// and `pnpm check:drift` (fail when there is one).
//
// The "from" side is built the way the server builds its database: our migrator applies every migration to a
// throw-away PGlite, and `prisma db pull` reads the result back as a schema. So the difference is always against
// what the migrations really create, whether or not the schema change is committed yet, and a change already
// written as a migration is never written twice. Both sides are then compared schema-to-schema (`migrate diff
// --from-schema-datamodel`), the one kind of diff 6.19 runs through a driver adapter without a database server;
// it never runs `--from-migrations`, which applies migrations to the adapter's database.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const prismaDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const schemaFile = path.join(prismaDir, 'schema.prisma');
export const migrationsDir = path.join(prismaDir, 'migrations');
const config = path.join(prismaDir, 'prisma6.config.mjs');
const prisma6 = path.join(
  path.dirname(createRequire(import.meta.url).resolve('prisma-6/package.json')),
  'build',
  'index.js',
);

/**
 * The schema as Prisma 6.19 reads it: Prisma 7's schema has no datasource `url`, which 6.19 requires, and the
 * generators are irrelevant to a diff.
 */
export function schemaForPrisma6(text) {
  const withoutGenerators = text.replace(/^generator\s+\w+\s*\{[^}]*\}\s*$/gm, '');
  if (/^\s*url\s*=/m.test(withoutGenerators)) return withoutGenerators;
  return withoutGenerators.replace(/^(datasource\s+\w+\s*\{)/m, '$1\n  url = env("DATABASE_URL")');
}

// --liftoff-only: V8 compiles WebAssembly (PGlite, Prisma's engines) with its baseline compiler only. Optimising it
// cost a short-lived run more than it saved: `pnpm check:drift` from 14.4 s of CPU to 7.9 s (9.3 s to 6.9 s).
function prisma(args, env = {}) {
  const result = spawnSync(process.execPath, ['--liftoff-only', prisma6, ...args, '--config', config], {
    encoding: 'utf8',
    env: { ...process.env, ...env, PRISMA_HIDE_UPDATE_MESSAGE: '1', CHECKPOINT_DISABLE: '1', NO_COLOR: '1' },
  });
  if (result.error) throw result.error;
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/**
 * What it takes to bring the database that `migrations` create to `schema` (a schema's text): `empty` when they
 * agree, else `summary` (human-readable) or `sql` (the migration script), as asked.
 */
export function diffMigrationsToSchema({
  migrations = migrationsDir,
  schema = readFileSync(schemaFile, 'utf8'),
  as = 'summary',
} = {}) {
  const scratch = mkdtempSync(path.join(tmpdir(), 'works-api-migrations-'));
  try {
    const migrated = path.join(scratch, 'migrated.prisma');
    writeFileSync(migrated, 'datasource db {\n  provider = "postgresql"\n  url      = env("DATABASE_URL")\n}\n');
    const pulled = prisma(['db', 'pull', '--schema', migrated], { WORKS_API_MIGRATIONS_DIR: migrations });
    if (pulled.status !== 0)
      throw new Error(`prisma db pull failed on the migrated database:\n${pulled.stdout}${pulled.stderr}`);
    // btree_gin's operator class of a uuid column is its default, so `db pull` leaves it out; but Prisma then
    // rejects its own output (a GIN field without an operator class). Name it, as schema.prisma does.
    writeFileSync(
      migrated,
      readFileSync(migrated, 'utf8').replace(
        /@@index\(\[(tenant_id), (\w+(?:\(ops: raw\("gin_trgm_ops"\)\))?)\](.*type: Gin)/g,
        '@@index([$1(ops: raw("uuid_ops")), $2]$3',
      ),
    );
    const target = path.join(scratch, 'schema.prisma');
    writeFileSync(target, schemaForPrisma6(schema));
    const diff = prisma([
      'migrate',
      'diff',
      '--from-schema-datamodel',
      migrated,
      '--to-schema-datamodel',
      target,
      '--exit-code',
      ...(as === 'sql' ? ['--script'] : []),
    ]);
    if (diff.status === 0) return { empty: true };
    if (diff.status === 2) return { empty: false, [as]: diff.stdout.trim() };
    throw new Error(`prisma migrate diff failed:\n${diff.stdout}${diff.stderr}`);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
