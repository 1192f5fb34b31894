import type { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Db } from '@works-api/prisma';
import { countQueues } from '@works-api/prisma';
import type { RateLimitBudget } from '../http/rate-limit';
import type { Logger } from './logger';

/**
 * Prometheus metrics (prom-client), one registry per process. Loaded only when METRICS_TOKEN is set
 * (`createMetrics` imports prom-client then), so that a server without metrics pays nothing for them. Under
 * WEB_CONCURRENCY the cluster's primary merges every worker's registry into one scrape (cluster-metrics.ts); each
 * metric's `aggregator` says how: counters and histograms add up, a database-wide gauge takes the largest value.
 */
export interface Metrics {
  readonly registry: Registry;
  /** A request started; the returned function records it once its response is done. */
  requestStarted(): (operation: string, method: string, status: number) => void;
  /** A request refused with 429, by the budget that refused it. */
  rateLimited(budget: RateLimitBudget | 'recipient' | 'sign-in'): void;
  /** A rate-limit counter could not be read (the cluster primary did not answer): the request passed unlimited. */
  rateLimitStoreFailed(store: 'cluster'): void;
  idempotentReplay(): void;
  /** One webhook delivery attempt ended; `final` when it was the last (delivered, or given up). */
  deliveryAttempt(outcome: DeliveryOutcome, final: boolean): void;
  /** Seconds from an event's commit to its delivery's first attempt. */
  firstAttemptLag(seconds: number): void;
  /** Database gauges: the pool (PostgreSQL) and the webhook queues. */
  watchDatabase(source: DatabaseSource): void;
  /** The outage state, as the app's outage monitor sees it (prisma/src/outage.ts). */
  watchOutage(isDown: () => boolean): void;
  /** This process's metrics in the Prometheus text format. */
  text(): Promise<string>;
  readonly contentType: string;
}

/** delivered: a 2xx; rejected: the receiver answered something else; unreachable: no answer (network, timeout, address). */
export type DeliveryOutcome = 'delivered' | 'rejected' | 'unreachable';

export interface PoolStats {
  total: number;
  idle: number;
  waiting: number;
  max: number;
}

export interface DatabaseSource {
  db: Db;
  /** The pg pool's counts; absent on PGlite (one in-process connection, no pool). */
  pool?: () => PoolStats;
  logger: Logger;
}

/** The queue counts stop here: a scrape stays cheap with a million rows queued, and the alert fired long before. */
export const QUEUE_COUNT_CAP = 100_000;
/** Database gauges are read at most this often per process, however often Prometheus (or several) scrape. */
const DATABASE_GAUGES_MAX_AGE_MS = 5_000;

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const LAG_BUCKETS = [0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60, 300, 1800, 3600];

export interface MetricsOptions {
  /** How long the queue gauges' statement result is reused (tests read every change: 0). */
  queueGaugesMaxAgeMs?: number;
}

export async function createMetrics(options: MetricsOptions = {}): Promise<Metrics> {
  const client = await import('prom-client');
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry });
  const counter = <L extends string>(name: string, help: string, labelNames: readonly L[] = []): Counter<L> =>
    new client.Counter({ name, help, labelNames, registers: [registry] });

  const requests = counter('works_http_requests_total', 'HTTP requests answered, by operation, method and status.', [
    'operation',
    'method',
    'status',
  ]);
  const duration: Histogram<'operation'> = new client.Histogram({
    name: 'works_http_request_duration_seconds',
    help: 'Time from a request arriving to its response finishing, by operation.',
    labelNames: ['operation'],
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  const inFlight = new client.Gauge({
    name: 'works_http_requests_in_flight',
    help: 'Requests being answered now.',
    registers: [registry],
  });
  const rateLimited = counter(
    'works_rate_limit_rejections_total',
    'Requests refused with 429, by budget: user, operator, unauthenticated (per client address), recipient.',
    ['budget'],
  );
  const storeFailures = counter(
    'works_rate_limit_store_failures_total',
    'Rate-limit counts that failed, so the request passed unlimited, by store: cluster (the primary under WEB_CONCURRENCY without Redis did not answer in time).',
    ['store'],
  );
  storeFailures.inc({ store: 'cluster' }, 0);
  const replays = counter(
    'works_idempotency_replays_total',
    'Creations answered from a stored Idempotency-Key response.',
  );
  const attempts = counter('works_webhook_delivery_attempts_total', 'Webhook delivery attempts, by outcome.', [
    'outcome',
  ]);
  // Every outcome from the start, so that rate() and alerts see a 0 rather than no series at all.
  for (const outcome of ['delivered', 'rejected', 'unreachable'] as const) attempts.inc({ outcome }, 0);
  const givenUp = counter(
    'works_webhook_deliveries_failed_total',
    'Webhook deliveries given up after their last retry (about 3 days of failures).',
  );
  const lag: Histogram = new client.Histogram({
    name: 'works_webhook_first_attempt_lag_seconds',
    help: "Time from an event's commit to the first attempt to deliver it.",
    buckets: LAG_BUCKETS,
    registers: [registry],
  });

  let isDown = () => false;
  new client.Gauge({
    name: 'works_db_outage',
    help: '1 while this process finds the database unreachable (requests answered 503), else 0.',
    aggregator: 'max',
    registers: [registry],
    collect() {
      this.set(isDown() ? 1 : 0);
    },
  });

  return {
    registry,
    contentType: registry.contentType,
    requestStarted() {
      inFlight.inc();
      const stop = duration.startTimer();
      return (operation, method, status) => {
        inFlight.dec();
        stop({ operation });
        requests.inc({ operation, method, status });
      };
    },
    rateLimited: (budget) => rateLimited.inc({ budget }),
    rateLimitStoreFailed: (store) => storeFailures.inc({ store }),
    idempotentReplay: () => replays.inc(),
    deliveryAttempt(outcome, final) {
      attempts.inc({ outcome });
      if (final && outcome !== 'delivered') givenUp.inc();
    },
    firstAttemptLag: (seconds) => lag.observe(Math.max(0, seconds)),
    watchDatabase: (source) =>
      databaseGauges(client, registry, source, options.queueGaugesMaxAgeMs ?? DATABASE_GAUGES_MAX_AGE_MS),
    watchOutage(source) {
      isDown = source;
    },
    text: () => registry.metrics(),
  };
}

type PromClient = typeof import('prom-client');

/** What one look at the webhook tables found (see `countQueues` for the statement and its plan). */
interface Queues {
  outbox: number;
  oldestUnfannedAt: Date | null;
  due: number;
  /** Emails queued and not yet sent (retries included). */
  mail: number;
}

function databaseGauges(client: PromClient, registry: Registry, source: DatabaseSource, maxAgeMs: number): void {
  const gauge = (
    name: string,
    help: string,
    aggregator: 'sum' | 'max',
    collect?: (this: Gauge) => void | Promise<void>,
  ) => new client.Gauge({ name, help, aggregator, registers: [registry], ...(collect && { collect }) });
  const { pool } = source;
  if (pool) {
    // Per process; the cluster's scrape adds them up, like the connections PostgreSQL sees.
    gauge('works_db_pool_connections', 'Open connections in the pg pool.', 'sum', function () {
      this.set(pool().total);
    });
    gauge('works_db_pool_idle_connections', 'Open connections not in use.', 'sum', function () {
      this.set(pool().idle);
    });
    gauge('works_db_pool_waiting_requests', 'Queries waiting for a free connection.', 'sum', function () {
      this.set(pool().waiting);
    });
    gauge('works_db_pool_max_connections', 'The pool size limit.', 'sum', function () {
      this.set(pool().max);
    });
  }
  // One statement for the three queue gauges, shared by concurrent scrapes and cached briefly.
  let cached: { at: number; queues: Promise<Queues | undefined> } | undefined;
  const queues = (): Promise<Queues | undefined> => {
    if (cached && Date.now() - cached.at < maxAgeMs) return cached.queues;
    const read = readQueues(source.db).catch((error: unknown) => {
      source.logger.warn({ err: error }, 'metrics: could not read the webhook queues');
      return undefined;
    });
    cached = { at: Date.now(), queues: read };
    return read;
  };
  gauge(
    'works_webhook_outbox_depth',
    `Events committed but not yet fanned out to their endpoints (counted up to ${QUEUE_COUNT_CAP}).`,
    'max',
    async function () {
      const found = await queues();
      if (found) this.set(found.outbox);
    },
  );
  gauge(
    'works_webhook_outbox_oldest_age_seconds',
    'Age of the oldest event not yet fanned out (0 when none): grows when no dispatcher is running.',
    'max',
    async function () {
      const found = await queues();
      if (found)
        this.set(found.oldestUnfannedAt ? Math.max(0, (Date.now() - found.oldestUnfannedAt.getTime()) / 1000) : 0);
    },
  );
  gauge(
    'works_mail_outbox_depth',
    `Emails queued but not yet sent, retries included (counted up to ${QUEUE_COUNT_CAP}): grows when no mail sender runs or the SMTP server refuses.`,
    'max',
    async function () {
      const found = await queues();
      if (found) this.set(found.mail);
    },
  );
  gauge(
    'works_webhook_deliveries_due',
    `Deliveries whose next attempt is due now (counted up to ${QUEUE_COUNT_CAP}).`,
    'max',
    async function () {
      const found = await queues();
      if (found) this.set(found.due);
    },
  );
}

/** The queues' counts, each stopped at QUEUE_COUNT_CAP (see `countQueues`). */
async function readQueues(db: Db): Promise<Queues> {
  const row = await countQueues(db, QUEUE_COUNT_CAP);
  return {
    outbox: Number(row?.outbox ?? 0),
    oldestUnfannedAt: row?.oldest ? new Date(row.oldest) : null,
    due: Number(row?.due ?? 0),
    mail: Number(row?.mail ?? 0),
  };
}
