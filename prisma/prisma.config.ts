import path from 'node:path';
import { defineConfig } from 'prisma/config';

/**
 * The Prisma 7 CLI, for `prisma generate` (run by the build). Its `migrate` and `db` commands need Prisma's native
 * schema engine, which cannot be downloaded here: openDatabase() applies migrations itself (src/migrate.ts) and
 * `pnpm db:migration <name>` writes new ones (scripts/new-migration.mjs).
 */
// The CLI would otherwise download native engines we never use (and cannot fetch offline); any existing file will do.
process.env.PRISMA_SCHEMA_ENGINE_BINARY ??= __filename;
process.env.PRISMA_QUERY_ENGINE_LIBRARY ??= __filename;

export default defineConfig({
  schema: path.join(__dirname, 'schema.prisma'),
  datasource: { url: process.env.DATABASE_URL },
});
