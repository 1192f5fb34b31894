import type { Config } from '../config';
import type { Database } from '@works-api/prisma';
import { traceStatements } from '@works-api/prisma';
import type { Logger } from './logger';
import type { Metrics, MetricsOptions } from './metrics';
import type { Tracing } from './tracing';

/**
 * Metrics and traces for one process, started the same way by every entry point (main.ts for a server or a
 * cluster worker, cluster.ts for the primary, worker.ts for `pnpm worker`). Each part is imported only when its
 * variables ask for it: METRICS_TOKEN for Prometheus metrics, the OTEL_* variables for traces.
 */
export interface Telemetry {
  metrics?: Metrics;
  tracing?: Tracing;
  /** GET /metrics: the token it asks for, and the scrape (every worker's metrics under WEB_CONCURRENCY). */
  endpoint?: { token: string; scrape: () => Promise<{ text: string; contentType: string }> };
  /** Database gauges for this process's database (call once it is open). */
  watchDatabase(database: Database, logger: Logger): void;
  /** Sends the spans still buffered. */
  shutdown(): Promise<void>;
}

type TelemetryConfig = Pick<Config, 'metricsToken' | 'tracing'>;

/** Starts what the configuration asks for; call it before the app's modules load, so that traces see them. */
export async function startTelemetry(
  config: TelemetryConfig,
  env: NodeJS.ProcessEnv,
  metricsOptions: MetricsOptions = {},
): Promise<Telemetry> {
  let tracing: Tracing | undefined;
  if (config.tracing.enabled) {
    const { startTracing } = await import('./tracing.js');
    tracing = await startTracing(env, { trustIncoming: config.tracing.trustIncoming });
    traceStatements((text, run) => tracing!.statement(text, run));
  }
  let metrics: Metrics | undefined;
  let endpoint: Telemetry['endpoint'];
  if (config.metricsToken) {
    const [{ createMetrics }, { joinClusterMetrics }] = await Promise.all([
      import('./metrics.js'),
      import('./cluster-metrics.js'),
    ]);
    const own = (metrics = await createMetrics(metricsOptions));
    const cluster = await joinClusterMetrics(own.registry);
    endpoint = {
      token: config.metricsToken,
      scrape: async () => ({ text: await (cluster ?? own.text)(), contentType: own.contentType }),
    };
  }
  return {
    ...(metrics && { metrics }),
    ...(tracing && { tracing }),
    ...(endpoint && { endpoint }),
    watchDatabase(database, logger) {
      metrics?.watchDatabase({
        db: database,
        logger,
        ...(database.poolStats && { pool: database.poolStats }),
      });
    },
    async shutdown() {
      traceStatements(undefined);
      await tracing?.shutdown();
    },
  };
}

/** The cluster's primary: gathers the workers' metrics for a scrape when metrics are on. */
export async function startPrimaryTelemetry(config: TelemetryConfig): Promise<void> {
  if (!config.metricsToken) return;
  const { serveClusterMetrics } = await import('./cluster-metrics.js');
  await serveClusterMetrics();
}
