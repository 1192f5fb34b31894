import { readFileSync } from 'node:fs';
import type { PGlite } from '@electric-sql/pglite';
import { TestEnvironment } from 'jest-environment-node';

/**
 * The integration tests' environment: Node's, plus one embedded database per jest worker instead of one per test
 * file. Opening a PGlite from the migrated template takes seconds of CPU (its in-memory file system, PostgreSQL's
 * start), about a third of a small file's time; emptying one takes milliseconds.
 *
 * Jest loads this module once per worker, outside the test files' sandboxes, so what it holds outlives a file.
 * Each file gets the worker's database emptied (every table but the migrations', as the template has them), so a
 * file still starts from what the template holds. `@electric-sql/pglite` and its two extensions are mapped
 * (jest.config.js) to pglite-outside.ts, which hands out the modules loaded here: one PGlite, whose classes the
 * Prisma adapter checks errors against. PGlite also checks the values it is given against this realm's Date, so
 * the sandbox gets this realm's Date, as Jest itself gives it Node's Buffer, ArrayBuffer and Uint8Array.
 */
/* eslint-disable @typescript-eslint/no-require-imports */
const pgliteModules = {
  ...(require('@electric-sql/pglite') as typeof import('@electric-sql/pglite')),
  ...(require('@electric-sql/pglite/contrib/pg_trgm') as object),
  ...(require('@electric-sql/pglite/contrib/btree_gin') as object),
};
/* eslint-enable @typescript-eslint/no-require-imports */

let workerDatabase: Promise<PGlite> | undefined;

/** The worker's PGlite, emptied: opened from the template (WORKS_API_PGLITE_TEMPLATE) on the first call. */
async function emptiedWorkerDatabase(extensions: NonNullable<ConstructorParameters<typeof PGlite>[0]>['extensions']) {
  const opening = workerDatabase;
  if (!opening) {
    const template = process.env.WORKS_API_PGLITE_TEMPLATE;
    if (!template) throw new Error('run the tests through jest (test/support/global-setup.ts makes the template)');
    workerDatabase = pgliteModules.PGlite.create({ extensions, loadDataDir: new Blob([readFileSync(template)]) });
    return workerDatabase;
  }
  const pglite = await opening;
  const { rows } = await pglite.query<{ name: string }>(
    `SELECT quote_ident(tablename) AS name FROM pg_tables WHERE schemaname = 'public' AND tablename <> '_prisma_migrations'`,
  );
  await pglite.exec(`TRUNCATE ${rows.map((row) => row.name).join(', ')} RESTART IDENTITY CASCADE`);
  return pglite;
}

export const TEST_PGLITE = Symbol.for('works-api.test.pglite');

/**
 * What a file may ask of its own run (the statement-plans test files its operations under the test's name, and
 * checks for stale files only when every test ran and passed): the test running, and how many were skipped
 * (`-t`, `.only`, `.skip`) or failed so far.
 */
export const TEST_RUN = Symbol.for('works-api.test.run');
export interface TestRun {
  testName?: string;
  skipped: number;
  failed: number;
}

/** The events of jest-circus this environment reads. */
interface TestEvent {
  name: string;
  test?: { name: string; errors: unknown[] };
}

export default class IntegrationEnvironment extends TestEnvironment {
  private readonly run: TestRun = { skipped: 0, failed: 0 };

  constructor(...args: ConstructorParameters<typeof TestEnvironment>) {
    super(...args);
    this.global.Date = Date;
    (this.global as unknown as Record<symbol, unknown>)[TEST_PGLITE] = {
      modules: pgliteModules,
      emptiedWorkerDatabase,
    };
    (this.global as unknown as Record<symbol, unknown>)[TEST_RUN] = this.run;
  }

  handleTestEvent(event: TestEvent): void {
    if (event.name === 'test_start') this.run.testName = event.test?.name;
    else if (event.name === 'test_skip' || event.name === 'test_todo') this.run.skipped += 1;
    else if (event.name === 'test_done' && event.test?.errors.length) this.run.failed += 1;
  }
}
