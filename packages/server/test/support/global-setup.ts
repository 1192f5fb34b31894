import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import type { Config } from 'jest';
import { applyMigrations, PGLITE_EXTENSIONS, pgliteSession, withPgSession } from '@works-api/prisma';
import { perWorkerDatabases, workerDatabaseUrl } from './worker-database';

/**
 * Runs once per test run. On PostgreSQL (DATABASE_URL set) it applies the migrations; on the embedded default
 * it builds a migrated PGlite once and dumps it, so every test file starts from a copy in half a second
 * instead of running initdb.
 */
export default async function globalSetup(globalConfig: { maxWorkers: number } & Config): Promise<void> {
  const url = process.env.DATABASE_URL;
  if (url && perWorkerDatabases()) {
    // A fresh database per worker (what an earlier run left would change the plans statement-plans reads).
    for (let worker = 1; worker <= globalConfig.maxWorkers; worker++) {
      const workerUrl = workerDatabaseUrl(url, worker);
      const name = new URL(workerUrl).pathname.slice(1);
      await withPgSession(url, async (session) => {
        await session.exec(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
        await session.exec(`CREATE DATABASE "${name}"`);
      });
      await withPgSession(workerUrl, (session) => applyMigrations(session));
    }
    return;
  }
  if (url) {
    await withPgSession(url, (session) => applyMigrations(session));
    return;
  }
  const pglite = new PGlite({ extensions: PGLITE_EXTENSIONS });
  await applyMigrations(pgliteSession(pglite));
  const dump = await pglite.dumpDataDir('none');
  await pglite.close();
  const file = path.join(tmpdir(), `works-api-template-${process.pid}.tar`);
  writeFileSync(file, Buffer.from(await dump.arrayBuffer()));
  process.env.WORKS_API_PGLITE_TEMPLATE = file;
}
