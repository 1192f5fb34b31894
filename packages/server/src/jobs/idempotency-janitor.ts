import type { Db } from '@works-api/prisma';
import { deleteExpiredIdempotencyKeys } from '@works-api/prisma';
import type { Logger } from '../observability/logger';
import { type Job, startRounds, taskJob } from './job';

const CLEANUP_EVERY_MS = 10 * 60 * 1000;
const CLEANUP_BATCH = 1000;
const CLEANUP_MAX_BATCHES = 20;

/**
 * Deletes expired keys now and every ten minutes (IDEMPOTENCY_CLEANUP_INTERVAL_MS), at most 20,000 per round in
 * batches of 1,000, so cleaning never competes with traffic for long. Every server process may run it; the deletes
 * do not conflict.
 */
export function startIdempotencyJanitor(db: Db, logger: Logger, everyMs = CLEANUP_EVERY_MS): { stop(): Promise<void> } {
  const round = async () => {
    let deleted = 0;
    for (let batch = 0; batch < CLEANUP_MAX_BATCHES; batch++) {
      const count = await deleteExpiredIdempotencyKeys(db, new Date(), CLEANUP_BATCH);
      deleted += count;
      if (count < CLEANUP_BATCH) break;
    }
    if (deleted > 0) logger.info({ deleted }, 'expired idempotency keys deleted');
  };
  return startRounds(round, everyMs, logger, 'idempotency key cleanup failed');
}

/** The janitor as a job (jobs/index.ts). */
export const idempotencyJanitorJob = (db: Db, logger: Logger, everyMs?: number): Job =>
  taskJob('idempotency-janitor', () => startIdempotencyJanitor(db, logger, everyMs));
