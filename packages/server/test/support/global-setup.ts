import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { applyMigrations, pgliteSession, withPgSession } from '@works-api/prisma';

/**
 * Runs once per test run. On PostgreSQL (DATABASE_URL set) it applies the migrations; on the embedded default
 * it builds a migrated PGlite once and dumps it, so every test file starts from a copy in half a second
 * instead of running initdb.
 */
export default async function globalSetup(): Promise<void> {
  const url = process.env.DATABASE_URL;
  if (url) {
    await withPgSession(url, (session) => applyMigrations(session));
    return;
  }
  const pglite = new PGlite();
  await applyMigrations(pgliteSession(pglite));
  const dump = await pglite.dumpDataDir('none');
  await pglite.close();
  const file = path.join(tmpdir(), `works-api-template-${process.pid}.tar`);
  writeFileSync(file, Buffer.from(await dump.arrayBuffer()));
  process.env.WORKS_API_PGLITE_TEMPLATE = file;
}
