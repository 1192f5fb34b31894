import cluster from 'node:cluster';
import { type Config, ConfigError, describeConfig } from './config';
import type { Database } from '@works-api/prisma';
import { createLogger, type Logger, prettyStdout, resolveLogFormat } from './observability/logger';
import type { Telemetry } from './observability/telemetry';
import type { RunningMail } from './mail/start';
import type { Dispatcher } from './webhooks/dispatcher';

/**
 * Start-up and shutdown as every entry point does them: main.ts (a server, or a worker of a cluster), cluster.ts
 * (the primary) and worker.ts (`pnpm worker`). The database and the dispatcher load only when asked for: after
 * the configuration is known to be good (a bad value is reported at once) and after telemetry started (traces see
 * Prisma and pg from their first query).
 */

/** A start-up failure the operator can act on: printed as one line, then exit 1. */
export class StartupError extends Error {}

/** Ends a process whose start failed: one line for what the operator can fix, the whole error for a bug. */
export function exitOnStartupFailure(error: unknown): never {
  if (error instanceof ConfigError) process.stderr.write(`works-api: invalid configuration: ${error.message}\n`);
  else if (error instanceof StartupError) process.stderr.write(`works-api: ${error.message}\n`);
  else console.error(error);
  process.exit(1);
}

/**
 * Listens for SIGTERM and SIGINT from now on. A signal that arrives before `handle` is given the handler is held
 * until then, so that start-up (PGlite opening its files, migrations) is never cut off half-way.
 */
export function shutdownSignals(): { handle(stop: (signal: NodeJS.Signals) => void): void } {
  let stop: ((signal: NodeJS.Signals) => void) | undefined;
  let held: NodeJS.Signals | undefined;
  const onSignal = (signal: NodeJS.Signals) => (stop ? stop(signal) : (held ??= signal));
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  return {
    handle(handler) {
      stop = handler;
      if (held) handler(held);
    },
  };
}

/**
 * The process's logger, in the LOG_FORMAT asked for: JSON lines, or readable ones for a person at a terminal.
 * `bindings` go on every line (the cluster's primary says `role: 'primary'`).
 */
export function processLogger(
  config: Pick<Config, 'logFormat' | 'logLevel'>,
  bindings?: Record<string, unknown>,
): { logger: Logger; pretty: boolean } {
  const pretty = resolveLogFormat(config.logFormat, Boolean(process.stdout.isTTY)) === 'pretty';
  const logger = createLogger(config.logLevel, pretty ? prettyStdout() : undefined);
  return { logger: bindings ? logger.child(bindings) : logger, pretty };
}

/** The first line of a process: what starts, on which Node, with which configuration (no secret). */
export function logStarting(logger: Logger, config: Config, what: string): void {
  // Which Node runs it: pnpm scripts run the project's own (Node 24), a bare `node` whatever is on PATH.
  logger.info(
    { node: process.version, config: describeConfig(config, { clustered: cluster.isWorker }) },
    `${what} starting`,
  );
  // The dev mailbox that a newcomer's first run has is off here: said on a line of its own, not only in the summary.
  const withheld = config.mail.devMailboxWithheld;
  if (withheld)
    logger.warn(
      `dev mailbox off: ${withheld}, and there members would read recipients' live answer links; emails wait in the outbox until SMTP_URL is set (DEV_MAILBOX=true keeps the dev mailbox on anyway)`,
    );
}

/** Opens the database (applying the migrations it lacks) and hands it to telemetry's gauges. */
export async function openProcessDatabase(config: Config, logger: Logger, telemetry: Telemetry): Promise<Database> {
  const { openDatabase } = await import('@works-api/prisma');
  const database = await openDatabase(config.database).catch((error: unknown) => {
    throw new StartupError(`cannot open the database: ${(error as Error).message}`);
  });
  if (database.migrated.length > 0) logger.info({ migrations: database.migrated }, 'database migrations applied');
  telemetry.watchDatabase(database, logger);
  return database;
}

/** The webhook dispatcher as configured, started. */
export async function startDispatcher(
  config: Config,
  database: Database,
  logger: Logger,
  telemetry: Telemetry,
): Promise<Dispatcher> {
  const { Dispatcher } = await import('./webhooks/dispatcher.js');
  return new Dispatcher({
    db: database,
    logger,
    allowPrivateUrls: config.webhooks.allowPrivateUrls,
    pollIntervalMs: config.webhooks.pollIntervalMs,
    maxInFlightPerTenant: config.webhooks.maxInFlightPerTenant,
    cleanupIntervalMs: config.webhooks.historyCleanupIntervalMs,
    ...(telemetry.metrics && { metrics: telemetry.metrics }),
    ...(telemetry.tracing && { tracing: telemetry.tracing }),
  }).start();
}

/** The mail sender as configured (MAIL_SENDER), through SMTP_URL or, without it, the dev mailbox. */
export async function startMailing(config: Config, database: Database, logger: Logger): Promise<RunningMail> {
  const { startMail } = await import('./mail/start.js');
  return startMail(config, database, logger);
}

/** What a process holds open until it exits. */
export interface ProcessResources {
  logger: Logger;
  telemetry: Telemetry;
  database: Database;
  dispatcher?: Dispatcher | undefined;
  /** The mail sender (MAIL_SENDER) and, without SMTP_URL, the dev mailbox. */
  mail?: RunningMail | undefined;
  janitor?: { stop(): Promise<void> } | undefined;
  /** The one-off re-fold of search texts (domain/search/refold.ts), while it runs. */
  refold?: { stop(): Promise<void> } | undefined;
  redis?: { close(): Promise<void> } | undefined;
}

/**
 * Closes everything, the database last. Webhook attempts in flight get up to `deliveriesTimeoutMs` to finish and
 * be recorded; resolves false when some had to be cut off.
 */
export async function closeResources(
  { logger, telemetry, database, dispatcher, mail, janitor, refold, redis }: ProcessResources,
  deliveriesTimeoutMs = 0,
): Promise<boolean> {
  const [delivered, mailed] = await Promise.all([
    dispatcher ? dispatcher.stop(deliveriesTimeoutMs) : true,
    mail ? mail.stop(deliveriesTimeoutMs) : true,
  ]);
  if (!delivered) logger.warn('webhook deliveries still in flight were cut off; they are sent again after their lease');
  if (!mailed) logger.warn('emails still being sent were cut off; they are sent again after their lease');
  await janitor?.stop();
  await refold?.stop();
  await redis?.close();
  await telemetry.shutdown().catch((error: unknown) => logger.warn({ err: error }, 'traces: the last export failed'));
  // Always last, and always awaited: PGlite flushes and closes its files here.
  await database.close();
  return delivered && mailed;
}

/** Runs a shutdown to its end, then exits with the code it gives (1 if it fails). */
export function exitAfter(logger: Logger, shutdown: () => Promise<number>): void {
  void shutdown()
    .then((code) => process.exit(code))
    .catch((error: unknown) => {
      logger.fatal({ err: error }, 'shutdown failed');
      process.exit(1);
    });
}
