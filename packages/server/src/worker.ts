import { ConfigError, describeConfig, loadConfig } from './config';
import { openDatabase } from './db/client';
import { createLogger } from './http/logger';
import { startTelemetry } from './observability/telemetry';
import { Dispatcher } from './webhooks/dispatcher';

/**
 * `pnpm worker`: the webhook dispatcher alone, no HTTP. For deployments that keep delivery off the API processes
 * (run those with WEBHOOK_DISPATCHER=false) or add delivery capacity; several workers and servers share the work
 * through PostgreSQL. On the embedded PGlite it must be the only process on its data folder.
 * SIGTERM/SIGINT: stop claiming, finish the attempts in flight (up to SHUTDOWN_TIMEOUT_MS), close the database.
 */
async function worker(): Promise<void> {
  const config = loadConfig(process.env);
  // Traces of delivery attempts; no metrics endpoint here (no HTTP): the API processes' scrape has the queues.
  const telemetry = await startTelemetry({ ...config, metricsToken: undefined }, process.env);
  const logger = createLogger(config.logLevel);
  logger.info({ config: describeConfig(config) }, 'works-api webhook worker starting');
  const database = await openDatabase(config.database);
  const dispatcher = new Dispatcher({
    db: database.prisma,
    logger,
    allowPrivateUrls: config.webhooks.allowPrivateUrls,
    pollIntervalMs: config.webhooks.pollIntervalMs,
    cleanupIntervalMs: config.webhooks.historyCleanupIntervalMs,
    ...(telemetry.tracing && { tracing: telemetry.tracing }),
  }).start();
  logger.info('works-api webhook worker delivering');
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'webhook worker stopping: finishing the deliveries in flight');
    void dispatcher
      .stop(config.shutdownTimeoutMs)
      .then(async (inTime) => {
        await telemetry.shutdown().catch(() => undefined);
        await database.close();
        process.exit(inTime ? 0 : 1);
      })
      .catch((error: unknown) => {
        logger.fatal({ err: error }, 'webhook worker shutdown failed');
        process.exit(1);
      });
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

worker().catch((error: unknown) => {
  if (error instanceof ConfigError) process.stderr.write(`works-api: invalid configuration: ${error.message}\n`);
  else console.error(error);
  process.exit(1);
});
