import path from 'node:path';
import { defineConfig } from 'prisma/config';

/**
 * The Prisma 7 CLI, for `prisma generate` (run by the build). Its `migrate` and `db` commands need Prisma's native
 * schema engine, which cannot be downloaded here: the server applies migrations itself (src/db/migrate.ts) and
 * `pnpm db:migration <name>` writes new ones (prisma/scripts/new-migration.mjs). The URL is the server's.
 */
// The CLI would otherwise download native engines we never use (and cannot fetch offline); any existing file will do.
process.env.PRISMA_SCHEMA_ENGINE_BINARY ??= __filename;
process.env.PRISMA_QUERY_ENGINE_LIBRARY ??= __filename;
const repoRoot = path.resolve(__dirname, '../..');

export default defineConfig({
  schema: path.join(repoRoot, 'prisma/schema.prisma'),
  datasource: { url: process.env.DATABASE_URL },
});
