import path from 'node:path';
import { defineConfig } from 'prisma/config';

/**
 * The Prisma CLI (generate, migrate diff, migrate status) on its WebAssembly schema engine, through a driver
 * adapter: `DATABASE_URL` set → that PostgreSQL; unset → a throw-away in-memory PGlite. Never the server's PGlite
 * folder: the CLI exits without closing PGlite, which leaves a data folder unreadable. The server applies
 * migrations itself (src/db/migrate.ts).
 */
// The CLI would otherwise download native engines we never use (and cannot fetch offline); any existing file will do.
process.env.PRISMA_SCHEMA_ENGINE_BINARY ??= __filename;
process.env.PRISMA_QUERY_ENGINE_LIBRARY ??= __filename;
const repoRoot = path.resolve(__dirname, '../..');
const databaseUrl = process.env.DATABASE_URL || undefined;
// Prisma 6 parses `url = env("DATABASE_URL")` even when an adapter supplies the connection.
process.env.DATABASE_URL = databaseUrl ?? 'postgresql://embedded-pglite/unused';

export default defineConfig({
  schema: path.join(repoRoot, 'prisma/schema.prisma'),
  experimental: { adapter: true },
  engine: 'js',
  async adapter() {
    if (databaseUrl) {
      const { PrismaPg } = await import('@prisma/adapter-pg');
      return new PrismaPg({ connectionString: databaseUrl });
    }
    const { PGlite } = await import('@electric-sql/pglite');
    const { PrismaPGlite } = await import('pglite-prisma-adapter');
    return new PrismaPGlite(new PGlite());
  },
});
