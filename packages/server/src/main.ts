// First: V8's heap growth is set before the modules below fill the heap (heap-growth.ts).
import './heap-growth';
import type { Server } from 'node:http';
import { type Config, describeRedis, loadConfig } from './config';
import type { Database } from '@works-api/prisma';
import type { Lifecycle } from './http/graceful-shutdown';
import type { Store } from 'express-rate-limit';
import type { RedisConnection } from './redis';
import { isClusterWorker, startClusterPrimary } from './cluster';
import type { Logger } from './observability/logger';
import { startTelemetry, type Telemetry } from './observability/telemetry';
import {
  closeResources,
  exitAfter,
  exitOnStartupFailure,
  logStarting,
  openProcessDatabase,
  type ProcessResources,
  processLogger,
  shutdownSignals,
  processMailOf,
  StartupError,
} from './start-up';
import type { ProcessMail } from './mail/start';

/**
 * Start-up: configuration (checked once) → logger → database (migrations applied) → Redis when configured →
 * the app → listen → the background jobs (jobs/index.ts). Shutdown on SIGTERM/SIGINT: readiness turns 503, the listener closes, requests in flight
 * finish (up to SHUTDOWN_TIMEOUT_MS, then they are cut off), and the database is closed cleanly before
 * exiting: 0 when everything drained, 1 when requests had to be cut off. A second signal cuts them off at once.
 * A signal that arrives while starting is held until start-up is done, so PGlite is never killed half-way.
 */
async function main(): Promise<void> {
  const signals = shutdownSignals();
  const config = loadConfig(process.env);
  // Before the app's modules load: traces see Prisma from its first query. Off unless configured.
  const telemetry = await startTelemetry(config, process.env);
  const { logger, pretty } = processLogger(config);
  logStarting(logger, config, 'works-api');
  const database = await openProcessDatabase(config, logger, telemetry);
  const redis = await connectConfiguredRedis(config, logger, database);
  const mail = await processMailOf(config, database, logger);
  const { server, lifecycle } = await serveApp(config, { logger, telemetry, database, redis, mail });

  const { startJobs } = await import('./jobs/index.js');
  const jobs = await startJobs('server', { config, database, logger, telemetry, mail });
  const resources: ProcessResources = { logger, telemetry, database, redis, jobs };
  process.once('uncaughtException', (error) => {
    logger.fatal({ err: error }, 'uncaught exception: closing the database and exiting');
    server.closeAllConnections();
    void closeResources(resources).finally(() => process.exit(1));
  });
  await announce(config, server, logger, pretty);
  signals.handle(await drainOnSignal(config, server, lifecycle, resources));
}

/** Redis for the rate-limit counters when REDIS_URL is set; the database is closed again if it cannot be reached. */
async function connectConfiguredRedis(
  config: Config,
  logger: Logger,
  database: Database,
): Promise<RedisConnection | undefined> {
  if (!config.redis) return undefined;
  const { url } = config.redis;
  const { connectRedis } = await import('./redis.js');
  return connectRedis(url, logger).catch(async (error: unknown) => {
    await database.close();
    throw new StartupError(`cannot reach ${describeRedis(url)}: ${(error as Error).message}`);
  });
}

/**
 * Where every limiter counts when the processes must share its budget: in Redis when REDIS_URL is set, else, in
 * a worker of WEB_CONCURRENCY, in the cluster's primary over IPC (cluster-rate-limit.ts). Undefined for one
 * process without Redis: each limiter then counts in this process's memory.
 */
async function sharedRateLimitStores(
  config: Config,
  redis: RedisConnection | undefined,
  telemetry: Telemetry,
): Promise<
  Record<'perUser' | 'unauthenticated' | 'recipientToken' | 'recipientAddress' | 'signIn', Store> | undefined
> {
  let store: ((name: string) => Store) | undefined;
  if (redis) store = (name) => redis.store(`${config.redis?.prefix}${name}`);
  else if (isClusterWorker()) {
    const { clusterRateLimits } = await import('./http/cluster-rate-limit.js');
    const { metrics } = telemetry;
    const shared = clusterRateLimits(metrics ? { onFailure: () => metrics.rateLimitStoreFailed('cluster') } : {});
    store = (name) => shared.store(name);
  }
  return (
    store && {
      perUser: store('rl:'),
      unauthenticated: store('rl-unauth:'),
      recipientToken: store('rl:recipient-token:'),
      recipientAddress: store('rl:recipient-address:'),
      signIn: store('rl:sign-in:'),
    }
  );
}

/** The app, listening on HOST:PORT; what is open is closed again if it cannot listen. */
async function serveApp(
  config: Config,
  {
    logger,
    telemetry,
    database,
    redis,
    mail,
  }: {
    logger: Logger;
    telemetry: Telemetry;
    database: Database;
    redis?: RedisConnection | undefined;
    mail: ProcessMail;
  },
): Promise<{ server: Server; lifecycle: Lifecycle }> {
  const [{ createApp }, { Lifecycle }, { answerClientErrors }] = await Promise.all([
    import('./app.js'),
    import('./http/graceful-shutdown.js'),
    import('./http/client-errors.js'),
  ]);
  const lifecycle = new Lifecycle();
  const stores = await sharedRateLimitStores(config, redis, telemetry);
  const app = createApp({
    db: database,
    adminToken: config.adminToken,
    logger,
    lifecycle,
    ping: () => database.ping(),
    rateLimit: { perMinute: config.rateLimitPerMinute, store: stores?.perUser },
    unauthenticatedRateLimit: { perMinute: config.rateLimitUnauthenticatedPerMinute, store: stores?.unauthenticated },
    trustProxy: config.trustProxy,
    corsOrigins: config.corsOrigins,
    limits: config.limits,
    idempotencyLockTimeoutMs: config.idempotencyLockTimeoutMs,
    webhooks: { allowPrivateUrls: config.webhooks.allowPrivateUrls },
    telemetry,
    // The recipient's page and operations: counted per answer link and per address, shared like the others.
    ...(stores && {
      recipientRateLimit: { stores: { perToken: stores.recipientToken, perAddress: stores.recipientAddress } },
    }),
    ...(mail.devMailbox && { devMailbox: mail.devMailbox }),
    sessions: config.sessions,
    publicUrl: config.mail.publicUrl,
    ...(stores && { signInStore: stores.signIn }),
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
  return { server, lifecycle };
}

/**
 * The first signal drains (readiness 503, no new connections, requests in flight get SHUTDOWN_TIMEOUT_MS), then
 * closes everything and exits; a second one cuts the requests in flight off at once.
 */
async function drainOnSignal(
  config: Config,
  server: Server,
  lifecycle: Lifecycle,
  resources: ProcessResources,
): Promise<(signal: NodeJS.Signals) => void> {
  const { drainServer } = await import('./http/graceful-shutdown.js');
  const { logger } = resources;
  let stopping = false;
  return (signal) => {
    if (stopping) {
      logger.warn({ signal }, 'second signal: cutting off the requests in flight');
      server.closeAllConnections();
      return;
    }
    stopping = true;
    lifecycle.startDraining();
    const started = Date.now();
    const drained = drainServer(server, config.shutdownTimeoutMs);
    logger.info(
      { signal, timeoutMs: config.shutdownTimeoutMs },
      'shutting down: not accepting connections, finishing the requests in flight',
    );
    exitAfter(logger, async () => {
      const inTime = await drained;
      if (!inTime) logger.warn({ timeoutMs: config.shutdownTimeoutMs }, 'requests still in flight were cut off');
      await closeResources(resources, Math.max(0, config.shutdownTimeoutMs - (Date.now() - started)));
      logger.info('shut down: database closed');
      return inTime ? 0 : 1;
    });
  };
}

/**
 * One JSON line with every address (and the command to create a first user, as a field); a person at a terminal
 * gets them as plain lines they can copy. Under WEB_CONCURRENCY the primary prints those, once.
 */
async function announce(config: Config, server: Server, logger: Logger, pretty: boolean): Promise<void> {
  const { entryPoints, createUserCommand, startupBanner, consoleSignInHint } = await import('./http/entry-points.js');
  const address = server.address();
  const points = entryPoints(`http://${config.host}:${typeof address === 'object' && address ? address.port : 0}`);
  logger.info(
    { url: points.api, docs: points.docs, openapi: points.openapi, console: points.console },
    `works-api listening on ${points.api}`,
  );
  const signInHint = consoleSignInHint(points, { devMailbox: config.mail.devMailbox, signUp: config.sessions.signUp });
  if (pretty && !isClusterWorker())
    process.stdout.write(`${startupBanner(points, Boolean(config.adminToken), signInHint).join('\n')}\n`);
  else if (signInHint) logger.info({ console: points.console }, signInHint);
  if (!(pretty && !isClusterWorker()) && config.adminToken)
    logger.info({ command: createUserCommand(points.api) }, 'create a user and an API key');
}

if (!startClusterPrimary(process.env)) main().catch(exitOnStartupFailure);
