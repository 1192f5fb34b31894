// First: V8's heap growth is set before the modules below fill the heap (heap-growth.ts).
import './heap-growth';
import { loadConfig } from './config';
import { startTelemetry } from './observability/telemetry';
import {
  closeResources,
  exitAfter,
  exitOnStartupFailure,
  logStarting,
  openProcessDatabase,
  processLogger,
  shutdownSignals,
  processMailOf,
} from './start-up';

/**
 * `pnpm worker`: the webhook dispatcher alone, no HTTP. For deployments that keep delivery off the API processes
 * (run those with WEBHOOK_DISPATCHER=false) or add delivery capacity; several workers and servers share the work
 * through PostgreSQL. On the embedded PGlite it must be the only process on its data folder.
 * SIGTERM/SIGINT: stop claiming, finish the attempts in flight (up to SHUTDOWN_TIMEOUT_MS), close the database;
 * exit 0, or 1 when attempts had to be cut off. A signal during start-up is held until start-up is done.
 */
async function worker(): Promise<void> {
  const signals = shutdownSignals();
  const config = loadConfig(process.env);
  // Traces of delivery attempts; no metrics endpoint here (no HTTP): the API processes' scrape has the queues.
  const telemetry = await startTelemetry({ ...config, metricsToken: undefined }, process.env);
  const { logger } = processLogger(config);
  logStarting(logger, config, 'works-api webhook worker');
  const database = await openProcessDatabase(config, logger, telemetry);
  // The dispatcher, and the mail sender too unless MAIL_SENDER=false (without SMTP_URL, its dev mailbox only logs).
  const mail = await processMailOf(config, database, logger);
  const { startJobs } = await import('./jobs/index.js');
  const jobs = await startJobs('worker', { config, database, logger, telemetry, mail });
  logger.info('works-api webhook worker delivering');
  let stopping = false;
  signals.handle((signal) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'webhook worker stopping: finishing the deliveries in flight');
    exitAfter(logger, async () =>
      (await closeResources({ logger, telemetry, database, jobs }, config.shutdownTimeoutMs)) ? 0 : 1,
    );
  });
}

worker().catch(exitOnStartupFailure);
