import type { Db } from '@works-api/prisma';
import { deleteEndedSessions, deleteOldSignIns } from '@works-api/prisma';
import type { Logger } from '../observability/logger';
import { type Job, startRounds, taskJob } from './job';

const EVERY_MS = 3_600_000;
const BATCH = 1000;
const MAX_BATCHES = 20;
/** Sign-ins are kept a day: the per-address cap counts the last hour's, and an expired link still says "expired". */
const SIGN_IN_KEPT_MS = 86_400_000;

/**
 * Deletes the sessions that no longer authenticate (past SESSION_LIFETIME, or unused for SESSION_IDLE_TIMEOUT) and
 * the sign-ins older than a day, at start-up and every hour, in bounded batches. Nothing depends on it for
 * correctness (an ended session is refused when presented, and not listed): it keeps the tables small. Every
 * server process may run it; the deletes do not conflict.
 */
export function startSessionJanitor(
  db: Db,
  logger: Logger,
  idleTimeoutMs: number,
  everyMs = EVERY_MS,
): { stop(): Promise<void> } {
  const round = async () => {
    let sessions = 0;
    let signIns = 0;
    for (let batch = 0; batch < MAX_BATCHES; batch++) {
      const now = new Date();
      const ended = await deleteEndedSessions(db, { now, idleMs: idleTimeoutMs, batch: BATCH });
      const old = await deleteOldSignIns(db, { before: new Date(now.getTime() - SIGN_IN_KEPT_MS), batch: BATCH });
      sessions += ended;
      signIns += old;
      if (ended < BATCH && old < BATCH) break;
    }
    if (sessions + signIns > 0) logger.info({ sessions, signIns }, 'ended sessions and old sign-ins deleted');
  };
  return startRounds(round, everyMs, logger, 'session cleanup failed');
}

/** The session janitor as a job (jobs/index.ts). */
export const sessionCleanupJob = (db: Db, logger: Logger, idleTimeoutMs: number, everyMs?: number): Job =>
  taskJob('session-cleanup', () => startSessionJanitor(db, logger, idleTimeoutMs, everyMs));
