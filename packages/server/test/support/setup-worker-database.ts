import { perWorkerDatabases, workerDatabaseUrl } from './worker-database';

// Runs before each test file (jest's setupFiles): point DATABASE_URL at this worker's database.
if (perWorkerDatabases()) {
  process.env.WORKS_API_SHARED_DATABASE_URL ??= process.env.DATABASE_URL;
  process.env.DATABASE_URL = workerDatabaseUrl(
    process.env.WORKS_API_SHARED_DATABASE_URL!,
    process.env.JEST_WORKER_ID ?? '1',
  );
}
