import type { Server } from 'node:http';
import { ConfigError, describeConfig, describeRedis, loadConfig } from './config';
import type { RedisConnection } from './http/rate-limit';
import { isClusterWorker, startClusterPrimary } from './cluster';
import { startTelemetry } from './observability/telemetry';

/** A start-up failure the operator can act on: printed as one line, then exit 1. */
class StartupError extends Error {}

/**
 * Start-up: configuration (checked once) → logger → database (migrations applied) → Redis when configured →
 * the app → listen. Shutdown on SIGTERM/SIGINT: readiness turns 503, the listener closes, requests in flight
 * finish (up to SHUTDOWN_TIMEOUT_MS, then they are cut off), and the database is closed cleanly before
 * exiting: 0 when everything drained, 1 when requests had to be cut off. A second signal cuts them off at once.
 * A signal that arrives while starting is held until start-up is done, so PGlite is never killed half-way.
 */
async function main(): Promise<void> {
  let stop: ((signal: NodeJS.Signals) => void) | undefined;
  let heldSignal: NodeJS.Signals | undefined;
  const onSignal = (signal: NodeJS.Signals) => (stop ? stop(signal) : (heldSignal ??= signal));
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);

  const config = loadConfig(process.env);
  // Before the app's modules load: traces see Prisma from its first query. Off unless configured.
  const telemetry = await startTelemetry(config, process.env);
  // The rest (Express, Prisma, the validator) loads only once the configuration is known to be good, so a bad
  // value is reported at once.
  const [
    { createApp },
    { openDatabase },
    { drainServer, Lifecycle },
    { startIdempotencyJanitor },
    { createLogger, prettyStdout, resolveLogFormat },
    { connectRedis },
    { entryPoints, createUserCommand, startupBanner },
    { Dispatcher },
    { answerClientErrors },
  ] = await Promise.all([
    import('./app.js'),
    import('./db/client.js'),
    import('./http/graceful-shutdown.js'),
    import('./http/idempotency.js'),
    import('./http/logger.js'),
    import('./http/rate-limit.js'),
    import('./http/entry-points.js'),
    import('./webhooks/dispatcher.js'),
    import('./http/client-errors.js'),
  ]);
  const pretty = resolveLogFormat(config.logFormat, Boolean(process.stdout.isTTY)) === 'pretty';
  const logger = createLogger(config.logLevel, pretty ? prettyStdout() : undefined);
  // Which Node runs it: pnpm scripts run the project's own (Node 24), a bare `node` whatever is on PATH.
  logger.info({ node: process.version, config: describeConfig(config) }, 'works-api starting');

  const database = await openDatabase(config.database).catch((error: unknown) => {
    throw new StartupError(`cannot open the database: ${(error as Error).message}`);
  });
  if (database.migrated.length > 0) logger.info({ migrations: database.migrated }, 'database migrations applied');
  telemetry.watchDatabase(database, logger);
  let redis: RedisConnection | undefined;
  if (config.redis) {
    const { url } = config.redis;
    redis = await connectRedis(url, logger).catch(async (error: unknown) => {
      await database.close();
      throw new StartupError(`cannot reach ${describeRedis(url)}: ${(error as Error).message}`);
    });
  }

  const lifecycle = new Lifecycle();
  const app = createApp({
    db: database.prisma,
    adminToken: config.adminToken,
    logger,
    lifecycle,
    ping: () => database.ping(),
    rateLimit: { perMinute: config.rateLimitPerMinute, store: redis?.store(`${config.redis?.prefix}rl:`) },
    corsOrigins: config.corsOrigins,
    webhooks: { allowPrivateUrls: config.webhooks.allowPrivateUrls },
    telemetry,
  });
  const server = app.listen(config.port, config.host);
  answerClientErrors(server);
  await new Promise<void>((resolve, reject) => server.once('listening', resolve).once('error', reject)).catch(
    async (error: unknown) => {
      await redis?.close();
      await database.close();
      throw new StartupError(`cannot listen on ${config.host}:${config.port}: ${(error as Error).message}`);
    },
  );
  const janitor = startIdempotencyJanitor(database.prisma, logger, config.idempotencyCleanupIntervalMs);
  const dispatcher = config.webhooks.dispatcher
    ? new Dispatcher({
        db: database.prisma,
        logger,
        allowPrivateUrls: config.webhooks.allowPrivateUrls,
        pollIntervalMs: config.webhooks.pollIntervalMs,
        cleanupIntervalMs: config.webhooks.historyCleanupIntervalMs,
        ...(telemetry.metrics && { metrics: telemetry.metrics }),
        ...(telemetry.tracing && { tracing: telemetry.tracing }),
      }).start()
    : undefined;
  const closeResources = async (deliveriesTimeoutMs = 0) => {
    // Webhook attempts in flight finish (within the shutdown timeout) and are recorded before the database closes.
    if (dispatcher && !(await dispatcher.stop(deliveriesTimeoutMs))) {
      logger.warn('webhook deliveries still in flight were cut off; they are sent again after their lease');
    }
    await janitor.stop();
    await redis?.close();
    await telemetry.shutdown().catch((error: unknown) => logger.warn({ err: error }, 'traces: the last export failed'));
    // Always last, and always awaited: PGlite flushes and closes its files here.
    await database.close();
  };

  let stopping = false;
  stop = (signal) => {
    if (stopping) {
      logger.warn({ signal }, 'second signal: cutting off the requests in flight');
      server.closeAllConnections();
      return;
    }
    stopping = true;
    lifecycle.startDraining();
    const drained = drainServer(server, config.shutdownTimeoutMs);
    logger.info(
      { signal, timeoutMs: config.shutdownTimeoutMs },
      'shutting down: not accepting connections, finishing the requests in flight',
    );
    const started = Date.now();
    void drained
      .then(async (inTime) => {
        if (!inTime) logger.warn({ timeoutMs: config.shutdownTimeoutMs }, 'requests still in flight were cut off');
        await closeResources(Math.max(0, config.shutdownTimeoutMs - (Date.now() - started)));
        logger.info('shut down: database closed');
        process.exit(inTime ? 0 : 1);
      })
      .catch((error: unknown) => {
        logger.fatal({ err: error }, 'shutdown failed');
        process.exit(1);
      });
  };
  process.once('uncaughtException', (error) => {
    logger.fatal({ err: error }, 'uncaught exception: closing the database and exiting');
    server.closeAllConnections();
    void closeResources().finally(() => process.exit(1));
  });

  const points = entryPoints(`http://${config.host}:${addressPort(server)}`);
  // One JSON line with every address (and the command to create a first user, as a field); a person at a
  // terminal gets them as plain lines they can copy. Under WEB_CONCURRENCY the primary prints those, once.
  logger.info(
    { url: points.api, docs: points.docs, openapi: points.openapi, console: points.console },
    `works-api listening on ${points.api}`,
  );
  if (pretty && !isClusterWorker())
    process.stdout.write(`${startupBanner(points, Boolean(config.adminToken)).join('\n')}\n`);
  else if (config.adminToken) logger.info({ command: createUserCommand(points.api) }, 'create a user and an API key');
  if (heldSignal) stop(heldSignal);
}

const addressPort = (server: Server): number => {
  const address = server.address();
  return typeof address === 'object' && address ? address.port : 0;
};

if (!startClusterPrimary(process.env)) {
  main().catch((error: unknown) => {
    if (error instanceof ConfigError) process.stderr.write(`works-api: invalid configuration: ${error.message}\n`);
    else if (error instanceof StartupError) process.stderr.write(`works-api: ${error.message}\n`);
    else console.error(error);
    process.exit(1);
  });
}
