import cluster, { type Worker } from 'node:cluster';
import { type Config, loadConfig } from './config';
import { serveClusterRateLimits } from './http/cluster-rate-limit';
import { entryPoints, startupBanner } from './http/entry-points';
import { startPrimaryTelemetry } from './observability/telemetry';
import { exitOnStartupFailure, processLogger } from './start-up';

/**
 * WEB_CONCURRENCY=N runs N server processes that share one port (node:cluster; the primary hands connections
 * round-robin to the workers and restarts a worker that dies). Only with PostgreSQL: an embedded PGlite belongs
 * to one process, so without DATABASE_URL the server stays a single process and says why.
 */
const MAX_WORKERS = 64;
// A worker that does not exit this long after SIGTERM is killed, so that the primary always ends.
const SHUTDOWN_GRACE_MS = 30_000;

/** True in a worker process of a cluster: the primary speaks for the cluster (its start-up lines, say). */
export const isClusterWorker = (): boolean => cluster.isWorker;

/**
 * Called first by main.ts. Returns true when this process became the primary of a cluster (it then only
 * supervises: the workers, which get false, serve requests).
 */
export function startClusterPrimary(env: NodeJS.ProcessEnv): boolean {
  if (!cluster.isPrimary) return false;
  const workers = workerCount(env.WEB_CONCURRENCY);
  if (workers === undefined) {
    console.error(`works-api: invalid configuration: WEB_CONCURRENCY must be a whole number from 1 to ${MAX_WORKERS}`);
    process.exit(1);
  }
  if (workers === 1) return false;
  if (!env.DATABASE_URL) {
    console.warn(
      `works-api: WEB_CONCURRENCY=${workers} ignored: the embedded database (PGlite) belongs to one process. ` +
        'Set DATABASE_URL to a PostgreSQL server to run several workers.',
    );
    return false;
  }
  superviseWorkers(workers, env);
  return true;
}

/** The number of workers asked for: 1 when unset or empty, undefined when malformed. */
export function workerCount(value: string | undefined): number | undefined {
  if (value === undefined || value.trim() === '') return 1;
  if (!/^\s*\d+\s*$/.test(value)) return undefined;
  const count = Number(value);
  return count >= 1 && count <= MAX_WORKERS ? count : undefined;
}

function superviseWorkers(count: number, env: NodeJS.ProcessEnv): void {
  let config: Config;
  try {
    config = loadConfig(env);
  } catch (error) {
    exitOnStartupFailure(error);
  }
  // The primary logs like the workers (JSON lines, or readable ones for a person), so stdout stays one format.
  const { logger, pretty } = processLogger(config, { role: 'primary' });
  logger.info({ workers: count }, `starting ${count} worker processes (WEB_CONCURRENCY=${count})`);
  // A scrape of /metrics reaches one worker, which asks the primary for every worker's metrics.
  startPrimaryTelemetry(config).catch((error: unknown) =>
    logger.error({ err: error }, "metrics: cannot gather the workers' metrics"),
  );
  // Without Redis the rate-limit counters live here, and the workers ask for them (http/cluster-rate-limit.ts):
  // one budget for the cluster, not one per worker.
  if (!config.redis) serveClusterRateLimits(logger);
  const listening = new WeakSet<Worker>();
  let stopping = false;
  let announced = false;

  const fork = () => {
    const worker = cluster.fork();
    worker.once('listening', (address) => {
      listening.add(worker);
      if (announced || !pretty) return;
      announced = true;
      const points = entryPoints(`http://${config.host}:${address.port}`);
      process.stdout.write(`${startupBanner(points, Boolean(config.adminToken)).join('\n')}\n`);
    });
  };
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) {
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit();
      return;
    }
    if (!listening.has(worker)) {
      // It died while starting (bad configuration, database unreachable): the others will too, so stop.
      logger.error({ worker: worker.process.pid, exit: code ?? signal }, 'a worker failed to start; stopping');
      stop('SIGTERM', 1);
      return;
    }
    logger.error({ worker: worker.process.pid, exit: code ?? signal }, 'a worker died; starting another');
    fork();
  });

  const stop = (signal: NodeJS.Signals, exitCode = 0) => {
    if (stopping) return;
    stopping = true;
    process.exitCode = exitCode;
    const alive = Object.values(cluster.workers ?? {}).filter((worker): worker is Worker => worker !== undefined);
    if (alive.length === 0) process.exit();
    // SIGTERM whatever arrived: after Ctrl-C the workers already got a SIGINT from the terminal, and a second
    // SIGINT would skip their graceful shutdown.
    for (const worker of alive) worker.process.kill('SIGTERM');
    setTimeout(() => {
      logger.error(
        { signal, graceMs: SHUTDOWN_GRACE_MS },
        'workers still running after the grace period; killing them',
      );
      for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGKILL');
      process.exit(1);
    }, SHUTDOWN_GRACE_MS).unref();
  };
  process.once('SIGTERM', (signal) => stop(signal));
  process.once('SIGINT', (signal) => stop(signal));

  for (let i = 0; i < count; i++) fork();
}
