/**
 * On PostgreSQL with TEST_DATABASE_PER_WORKER=true (CI), each jest worker runs its files on a database of its own
 * (`<database>_w<worker>`, made empty and migrated by global-setup.ts), so that the files can run two at a time: one
 * file's dispatcher or mail sender never sees another's rows. Servers a test spawns inherit the worker's URL.
 */
export function workerDatabaseUrl(url: string, worker: string | number): string {
  const parsed = new URL(url);
  parsed.pathname = `${parsed.pathname.replace(/^\//, '')}_w${worker}`;
  return parsed.toString();
}

export const perWorkerDatabases = () =>
  process.env.TEST_DATABASE_PER_WORKER === 'true' && Boolean(process.env.DATABASE_URL);
