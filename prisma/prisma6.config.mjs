// Configuration of the Prisma 6.19 CLI (installed as `prisma-6`) that scripts/migrations.mjs runs to write and check
// migrations. Prisma 7's CLI cannot: its `migrate` and `db` commands spawn a native schema engine that cannot be
// downloaded here. 6.19 runs its schema engine in WebAssembly ("js" engine) through a driver adapter.
//
// The adapter is a throw-away in-memory PGlite, so nothing here needs or touches a database server. With
// WORKS_API_MIGRATIONS_DIR set, our own migrator (src/migrate.ts) first applies the
// migrations of that folder to it, exactly as the server does at start-up.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { defineConfig } = require('prisma-6/config');

// The CLI would otherwise download native engines it never uses; any existing file will do.
process.env.PRISMA_SCHEMA_ENGINE_BINARY ??= import.meta.filename;
process.env.PRISMA_QUERY_ENGINE_LIBRARY ??= import.meta.filename;
// 6.19 parses the schema's `url = env("DATABASE_URL")` even though the adapter supplies the connection.
process.env.DATABASE_URL = 'postgresql://in-memory-pglite/unused';

async function throwAwayDatabase() {
  const { PGlite } = require('@electric-sql/pglite');
  const { PrismaPGlite } = require('pglite-prisma-adapter');
  const { PGLITE_EXTENSIONS } = require('./dist/pglite-extensions.js');
  const pglite = new PGlite({ extensions: PGLITE_EXTENSIONS });
  const migrationsDir = process.env.WORKS_API_MIGRATIONS_DIR;
  if (migrationsDir) {
    const { applyMigrations, pgliteSession, readMigrations } = require('./dist/migrate.js');
    await applyMigrations(pgliteSession(pglite), readMigrations(migrationsDir));
  }
  return new PrismaPGlite(pglite);
}

// The CLI asks for the adapter more than once per command; PGlite's start-up (initdb) is most of its time.
let database;

export default defineConfig({
  experimental: { adapter: true },
  engine: 'js',
  adapter: () => (database ??= throwAwayDatabase()),
});
