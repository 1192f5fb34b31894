import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import type { Config } from 'jest';
import { applyMigrations, PGLITE_EXTENSIONS, pgliteSession, readMigrations, withPgSession } from '@works-api/prisma';
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
  const template = await pgliteTemplate();
  process.env.WORKS_API_PGLITE_TEMPLATE = template;
  await unpackedTemplate(template);
}

/**
 * The template unpacked into a data folder, once, beside it (`<template>.dir`): a spawned server's folder is then a
 * file copy (support/process.ts) instead of an embedded PostgreSQL started in the test to unpack the template
 * (a second or two of CPU each, some forty times in the process suites).
 */
async function unpackedTemplate(template: string): Promise<void> {
  const folder = `${template}.dir`;
  if (existsSync(folder)) return;
  const partial = `${folder}.${process.pid}.partial`;
  const pglite = new PGlite(partial, {
    extensions: PGLITE_EXTENSIONS,
    loadDataDir: new Blob([readFileSync(template)]),
  });
  await pglite.waitReady;
  await pglite.close();
  renameSync(partial, folder);
}

/**
 * The migrated PGlite, dumped: made once for what makes it (the migrations, the migrator, PGlite and its extensions)
 * and kept in the temporary folder, so that the next run (`pnpm test:long`, a developer's next `jest` of one file)
 * starts its workers at once instead of after ten seconds of migrations. A change to any of those makes another.
 */
async function pgliteTemplate(): Promise<string> {
  const hash = createHash('sha256');
  for (const migration of readMigrations()) hash.update(`${migration.name}\0${migration.checksum}\0`);
  hash.update(readFileSync(path.resolve(__dirname, '../../../../prisma/src/migrate.ts')));
  // PGlite's real path names its version (pnpm's store).
  hash.update(realpathSync(require.resolve('@electric-sql/pglite')));
  hash.update(Object.keys(PGLITE_EXTENSIONS).join(','));
  const folder = path.join(tmpdir(), 'works-api-pglite-templates');
  const file = path.join(folder, `${hash.digest('hex').slice(0, 16)}.tar`);
  if (existsSync(file)) {
    utimesSync(file, new Date(), new Date()); // in use: see below
    if (existsSync(`${file}.dir`)) utimesSync(`${file}.dir`, new Date(), new Date());
    return file;
  }

  const pglite = new PGlite({ extensions: PGLITE_EXTENSIONS });
  await applyMigrations(pgliteSession(pglite));
  const dump = await pglite.dumpDataDir('none');
  await pglite.close();
  mkdirSync(folder, { recursive: true });
  // Templates of other migrations (other branches, the past) go after a day unused. Written whole, then renamed, so
  // that a run started meanwhile never reads half a file.
  for (const other of readdirSync(folder).map((name) => path.join(folder, name)))
    if (Date.now() - statSync(other).mtimeMs > 24 * 60 * 60 * 1000) rmSync(other, { recursive: true, force: true });
  const partial = `${file}.${process.pid}.partial`;
  writeFileSync(partial, Buffer.from(await dump.arrayBuffer()));
  renameSync(partial, file);
  return file;
}
