import type { Db } from '@works-api/prisma';
import { refoldSearchTexts } from '../domain/search/refold';
import type { Logger } from '../observability/logger';
import { type Job, taskJob } from './job';

/**
 * Runs the re-fold in the background after start-up (a database that never had rows folded in SQL finishes in one
 * batch per table). Several server processes may run it at once: the updates write the same texts.
 */
export function startSearchRefold(db: Db, logger: Logger): { stop(): Promise<void> } {
  let stop = false;
  const running = refoldSearchTexts(db, () => stop)
    .then((changed) => {
      if (changed > 0) logger.info({ changed }, 'search texts re-folded as the application folds them');
    })
    .catch((error: unknown) => logger.warn({ err: error }, 'search re-fold failed; it resumes at the next start'));
  return {
    async stop() {
      stop = true;
      await running;
    },
  };
}

/** The re-fold as a job (jobs/index.ts): it ends by itself once every row is folded. */
export const searchRefoldJob = (db: Db, logger: Logger): Job =>
  taskJob('search-refold', () => startSearchRefold(db, logger));
