import cluster from 'node:cluster';
import { type Config, ConfigError, describeConfig } from './config';
import type { Database } from '@works-api/prisma';
import { createLogger, type Logger, prettyStdout, resolveLogFormat } from './observability/logger';
import type { Telemetry } from './observability/telemetry';
import type { Job } from './jobs/job';
import type { ProcessMail } from './mail/start';

/**
 * Start-up and shutdown as every entry point does them: main.ts (a server, or a worker of a cluster), cluster.ts
 * (the primary) and worker.ts (`pnpm worker`). The database and the jobs load only when asked for: after
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

/** The mail transport (SMTP_URL, or the dev mailbox) and the sender when this process runs one (MAIL_SENDER). */
export async function processMailOf(config: Config, database: Database, logger: Logger): Promise<ProcessMail> {
  const { processMail } = await import('./mail/start.js');
  return processMail(config, database, logger);
}

/** What a process holds open until it exits. */
export interface ProcessResources {
  logger: Logger;
  telemetry: Telemetry;
  database: Database;
  /** Its background jobs (jobs/index.ts), started. */
  jobs: readonly Job[];
  redis?: { close(): Promise<void> } | undefined;
}

/**
 * Closes everything, the database last. The jobs' work in flight (webhook attempts, emails) gets up to
 * `deliveriesTimeoutMs` to finish and be recorded; resolves false when some had to be cut off.
 */
export async function closeResources(
  { logger, telemetry, database, jobs, redis }: ProcessResources,
  deliveriesTimeoutMs = 0,
): Promise<boolean> {
  const { stopJobs } = await import('./jobs/index.js');
  const inTime = await stopJobs(jobs, deliveriesTimeoutMs, logger);
  await redis?.close();
  await telemetry.shutdown().catch((error: unknown) => logger.warn({ err: error }, 'traces: the last export failed'));
  // Always last, and always awaited: PGlite flushes and closes its files here.
  await database.close();
  return inTime;
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
