import type { Logger } from '../observability/logger';
import type { Job, JobContext } from './job';

export type { JobContext } from './job';

/** Where a job runs: an API process (main.ts), a `pnpm worker` (worker.ts), or both. */
type ProcessRole = 'server' | 'worker';

interface JobEntry {
  runsIn: readonly ProcessRole[];
  /** The job as configured, or undefined when the configuration turns it off in this process. */
  create(context: JobContext, role: ProcessRole): Promise<Job | undefined>;
}

/**
 * Every background job, in the order start-up starts them. Loaded only when asked for (the dispatcher's modules
 * stay out of a process that runs none).
 */
const JOBS: readonly JobEntry[] = [
  {
    runsIn: ['server', 'worker'],
    create: async ({ mail }) =>
      mail.sender ? (await import('./mail-sender.js')).mailSenderJob(mail.sender) : undefined,
  },
  {
    runsIn: ['server'],
    create: async ({ config, database, logger }) =>
      (await import('./idempotency-janitor.js')).idempotencyJanitorJob(
        database,
        logger,
        config.idempotencyCleanupIntervalMs,
      ),
  },
  {
    runsIn: ['server'],
    create: async ({ config, database, logger }) =>
      (await import('./session-cleanup.js')).sessionCleanupJob(database, logger, config.sessions.idleTimeoutMs),
  },
  {
    runsIn: ['server'],
    create: async ({ database, logger }) => (await import('./search-refold.js')).searchRefoldJob(database, logger),
  },
  {
    runsIn: ['server', 'worker'],
    // WEBHOOK_DISPATCHER=false keeps delivery off the API processes; a worker exists to deliver.
    create: async (context, role) =>
      role === 'worker' || context.config.webhooks.dispatcher
        ? (await import('./webhook-dispatcher.js')).webhookDispatcherJob(context)
        : undefined,
  },
];

/** The jobs a process of `role` runs, as configured, started. */
export async function startJobs(role: ProcessRole, context: JobContext): Promise<Job[]> {
  const jobs: Job[] = [];
  for (const entry of JOBS) {
    if (!entry.runsIn.includes(role)) continue;
    const job = await entry.create(context, role);
    if (!job) continue;
    job.start();
    jobs.push(job);
  }
  return jobs;
}

/**
 * Stops every job at once, each given up to `timeoutMs` for its work in flight; resolves false when some had to be
 * cut off (what was cut off is taken up again after its lease).
 */
export async function stopJobs(jobs: readonly Job[], timeoutMs: number, logger: Logger): Promise<boolean> {
  const stopped = await Promise.all(
    jobs.map(async (job) => {
      const inTime = await job.stop(timeoutMs);
      if (!inTime) logger.warn(job.cutOffMessage ?? `${job.name}: work in flight was cut off`);
      return inTime;
    }),
  );
  return stopped.every(Boolean);
}
