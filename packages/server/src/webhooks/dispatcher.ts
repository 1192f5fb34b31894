import type { Db } from '../db/client';
import { onOutboxWrite } from '../db/outbox-signal';
import { plainQuery } from '../db/plain-statement';
import type { Lookup } from '../domain/webhooks/addresses';
import { DISABLE_AFTER_FAILING_MS, retryDelayMs } from '../domain/webhooks/backoff';
import { systemLookup } from '../domain/webhooks/endpoints';
import { activeSecrets, signedHeaders } from '../domain/webhooks/signing';
import type { Logger } from '../observability/logger';
import type { DeliveryOutcome, Metrics } from '../observability/metrics';
import type { Tracing } from '../observability/tracing';
import { type AttemptOutcome, sendEvent } from './send';
import type { WebhookDelivery, WebhookEndpoint, WebhookEvent } from '../db/generated/client';
import { secretBoxOf } from '../db/secret-box';

export interface DispatcherOptions {
  db: Db;
  logger: Logger;
  /** WEBHOOK_ALLOW_PRIVATE_URLS: deliver to loopback and private addresses too. */
  allowPrivateUrls: boolean;
  /** Without a nudge, how often to look for due deliveries (retries, and events written by other processes). */
  pollIntervalMs?: number;
  /** Deliveries in flight at once, across endpoints. */
  maxInFlight?: number;
  /**
   * Deliveries of one tenant in flight at once in this process (WEBHOOK_MAX_IN_FLIGHT_PER_TENANT): a tenant whose
   * endpoints never answer holds at most this many slots, the rest serve the other tenants.
   */
  maxInFlightPerTenant?: number;
  /** How often to delete the history past retention (default: hourly; WEBHOOK_HISTORY_CLEANUP_INTERVAL_MS). */
  cleanupIntervalMs?: number;
  /** Injectable for tests: the time (which decides what is due and what signs), jitter, DNS. */
  clock?: () => Date;
  random?: () => number;
  lookup?: Lookup;
  timeoutMs?: number;
  /**
   * Claim (and clean up) only these tenants' deliveries. For tests that share one PostgreSQL database, where each
   * test's dispatcher must send its own tenants' events (with its own clock) and leave the others' alone.
   */
  onlyTenants?: () => readonly string[];
  /** Attempts by outcome and the first attempt's lag (Prometheus), and a span per attempt (OpenTelemetry). */
  metrics?: Pick<Metrics, 'deliveryAttempt' | 'firstAttemptLag'>;
  tracing?: Pick<Tracing, 'deliveryAttempt'>;
}

/** A delivery this process has claimed: what to send, and where. */
type Claimed = Pick<WebhookDelivery, 'id' | 'attempts' | 'endpointId' | 'eventId'> & { tenantId: string } & Pick<
    WebhookEvent,
    'body'
  > & { eventCreatedAt: WebhookEvent['createdAt'] } & Pick<
    WebhookEndpoint,
    'url' | 'secret' | 'previousSecret' | 'previousSecretExpiresAt' | 'failingSince'
  >;

interface Finished {
  delivery: Claimed;
  outcome: AttemptOutcome;
  at: Date;
}

const FAN_OUT_BATCH = 200;
/**
 * A nudge waits this long before the round starts, so a burst of commits is fanned out and claimed in one round
 * (a few statements per batch instead of per event) at a cost of milliseconds of delivery lag.
 */
const NUDGE_BATCH_WINDOW_MS = 10;
/** Delivery history (events and their deliveries, once none is pending) is kept this long. */
export const HISTORY_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;
const CLEANUP_EVERY_MS = 60 * 60 * 1000;
const CLEANUP_BATCH = 1000;

/** The smallest UUIDv7 of a time: ids below it were made before it (the event ids' primary key finds them). */
export const firstIdAt = (at: Date): string => {
  const hex = at.getTime().toString(16).padStart(12, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-7000-8000-000000000000`;
};

const outcomeOf = (outcome: AttemptOutcome): DeliveryOutcome =>
  outcome.ok ? 'delivered' : outcome.statusCode !== null ? 'rejected' : 'unreachable';

/** A claimed delivery is someone's for this long: a process killed mid-send leaves it due again afterwards. */
const LEASE_MS = 60_000;

/**
 * Moves events from the outbox to the endpoints, outside the request path. Each round: fan new outbox rows out
 * into one delivery per subscribed endpoint, record the attempts that finished, then claim due deliveries
 * (`FOR UPDATE SKIP LOCKED`, with a lease) and send them, up to `maxInFlight` at once. Every server process
 * runs one (as may `pnpm worker`); they share the work through the database without sending anything twice.
 *
 * The ordering rule lives in the claim: a delivery of a request's event is not due while an earlier event of the
 * same request to the same endpoint is still pending (or not yet fanned out).
 */
export class Dispatcher {
  private readonly db: Db;
  private readonly logger: Logger;
  private readonly options: Required<Omit<DispatcherOptions, 'db' | 'logger' | 'onlyTenants' | 'metrics' | 'tracing'>>;
  private readonly onlyTenants: (() => readonly string[]) | undefined;
  private readonly metrics: DispatcherOptions['metrics'];
  private readonly tracing: DispatcherOptions['tracing'];
  private readonly inFlight = new Set<Promise<void>>();
  /** Attempts in flight per tenant id (only tenants with some). */
  private readonly inFlightByTenant = new Map<string, number>();
  private finished: Finished[] = [];
  private running: Promise<void> | undefined;
  private stopping = false;
  private wake: (() => void) | undefined;
  private nudged = false;
  private batchTimer: NodeJS.Timeout | undefined;
  private unsubscribe: (() => void) | undefined;
  private lastCleanup = 0;

  constructor(options: DispatcherOptions) {
    this.db = options.db;
    this.logger = options.logger;
    this.onlyTenants = options.onlyTenants;
    this.metrics = options.metrics;
    this.tracing = options.tracing;
    this.options = {
      allowPrivateUrls: options.allowPrivateUrls,
      pollIntervalMs: options.pollIntervalMs ?? 1000,
      maxInFlight: options.maxInFlight ?? 64,
      maxInFlightPerTenant: options.maxInFlightPerTenant ?? 8,
      cleanupIntervalMs: options.cleanupIntervalMs ?? CLEANUP_EVERY_MS,
      clock: options.clock ?? (() => new Date()),
      random: options.random ?? Math.random,
      lookup: options.lookup ?? systemLookup,
      timeoutMs: options.timeoutMs ?? 10_000,
    };
  }

  /** Runs until `stop`, waking at once when this process commits an outbox row. */
  start(): this {
    this.unsubscribe = onOutboxWrite(this.db, () => this.nudge());
    this.running = this.loop();
    return this;
  }

  /** Look again now (a commit, a finished attempt): after a short batch window, when the loop is asleep. */
  nudge(): void {
    this.nudged = true;
    if (!this.wake || this.batchTimer) return;
    this.batchTimer = setTimeout(() => {
      this.batchTimer = undefined;
      this.wake?.();
    }, NUDGE_BATCH_WINDOW_MS);
  }

  /**
   * One full round, waiting for every attempt it starts: for tests that drive the clock themselves. Returns how
   * many deliveries it sent.
   */
  async runOnce(): Promise<number> {
    while ((await this.fanOut()) === FAN_OUT_BATCH);
    await this.recordFinished();
    const claimed = await this.claim(this.options.maxInFlight);
    for (const delivery of claimed) this.launch(delivery);
    await Promise.all(this.inFlight);
    await this.recordFinished();
    return claimed.length;
  }

  /**
   * Stops claiming, waits for the attempts in flight (up to `timeoutMs`) and records them. Resolves true when
   * everything in flight finished; what did not is sent again after its lease, by whichever process is running.
   */
  async stop(timeoutMs: number): Promise<boolean> {
    this.stopping = true;
    this.unsubscribe?.();
    clearTimeout(this.batchTimer);
    this.wake?.();
    await this.running;
    let timer: NodeJS.Timeout | undefined;
    const inTime = await Promise.race([
      Promise.all(this.inFlight).then(() => true),
      new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs))),
    ]);
    clearTimeout(timer);
    await this.recordFinished().catch((error: unknown) =>
      this.logger.warn({ err: error }, 'webhooks: recording attempts failed'),
    );
    return inTime;
  }

  private async loop(): Promise<void> {
    while (!this.stopping) {
      this.nudged = false;
      let busy: boolean;
      try {
        if (Date.now() - this.lastCleanup >= this.options.cleanupIntervalMs) {
          this.lastCleanup = Date.now();
          await this.cleanUp();
        }
        busy = (await this.fanOut()) === FAN_OUT_BATCH;
        await this.recordFinished();
        const free = this.options.maxInFlight - this.inFlight.size;
        if (free > 0 && !this.stopping) {
          const claimed = await this.claim(free);
          for (const delivery of claimed) this.launch(delivery);
          busy ||= claimed.length === free;
        }
      } catch (error) {
        // The database may be briefly away (restart, 503s elsewhere): try again at the next poll.
        this.logger.warn({ err: error }, 'webhooks: dispatcher round failed');
        busy = false;
      }
      if (!busy && !this.nudged && !this.stopping) await this.sleep(this.options.pollIntervalMs);
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    }).then(() => {
      this.wake = undefined;
    });
  }

  /** The signing secrets in plaintext: they are stored sealed (db/secret-box.ts). */
  private openSecrets(sealed: readonly string[]): string[] {
    const box = secretBoxOf(this.db);
    return sealed.map((secret) => box.open(secret, 'webhook-secret'));
  }

  private launch(delivery: Claimed): void {
    const at = this.options.clock();
    const headers: Record<string, string> = {
      ...signedHeaders(delivery.eventId, delivery.body, this.openSecrets(activeSecrets(delivery, at)), at),
    };
    if (delivery.attempts === 1)
      this.metrics?.firstAttemptLag((at.getTime() - new Date(delivery.eventCreatedAt).getTime()) / 1000);
    const send = () =>
      sendEvent(delivery.url, headers, delivery.body, {
        allowPrivateUrls: this.options.allowPrivateUrls,
        lookup: this.options.lookup,
        timeoutMs: this.options.timeoutMs,
      });
    const traced = this.tracing
      ? this.tracing.deliveryAttempt(
          {
            url: delivery.url,
            deliveryId: delivery.id,
            eventId: delivery.eventId,
            endpointId: delivery.endpointId,
            attempt: delivery.attempts,
          },
          headers,
          send,
        )
      : send();
    const attempt = traced.then((outcome) => {
      this.finished.push({ delivery, outcome, at: this.options.clock() });
      this.inFlight.delete(attempt);
      const left = (this.inFlightByTenant.get(delivery.tenantId) ?? 1) - 1;
      if (left > 0) this.inFlightByTenant.set(delivery.tenantId, left);
      else this.inFlightByTenant.delete(delivery.tenantId);
      this.nudge();
    });
    this.inFlight.add(attempt);
    this.inFlightByTenant.set(delivery.tenantId, (this.inFlightByTenant.get(delivery.tenantId) ?? 0) + 1);
  }

  /**
   * Deletes the history older than 30 days (events whose deliveries are all done, with those deliveries), in
   * bounded batches; returns how many events went.
   */
  async cleanUp(): Promise<number> {
    const before = firstIdAt(new Date(this.options.clock().getTime() - HISTORY_RETENTION_MS));
    let deleted = 0;
    for (let batch = 0; batch < 10; batch++) {
      const rows = await this.run<Pick<WebhookEvent, 'id'>>(
        `DELETE FROM webhook_events WHERE id IN (
           SELECT e.id FROM webhook_events e
           WHERE e.id < $1::uuid AND e.fanned_out_at IS NOT NULL
             AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id AND d.status = 'pending')
             AND ($3::uuid[] IS NULL OR e.tenant_id = ANY ($3::uuid[]))
           ORDER BY e.id LIMIT $2)
         RETURNING id`,
        [before, CLEANUP_BATCH, this.onlyTenants?.() ?? null],
      );
      deleted += rows.length;
      if (rows.length < CLEANUP_BATCH) break;
    }
    if (deleted > 0) this.logger.info({ deleted }, 'webhooks: history older than 30 days deleted');
    return deleted;
  }

  private run<Row>(sql: string, values: unknown[]): Promise<Row[]> {
    return plainQuery<Row>(this.db, sql, values);
  }

  /**
   * One outbox batch → deliveries, in one statement: each event goes to the tenant's enabled endpoints whose
   * filter takes its type (a test event to its one endpoint); events nobody subscribes to are deleted, the rest
   * marked. A delivery's id keeps its event's UUIDv7 timestamp (so deliveries sort by time like every id) and
   * takes the rest from a hash of the event and endpoint ids: unique per pair, and the same if computed twice.
   */
  private async fanOut(): Promise<number> {
    const now = this.options.clock().toISOString();
    const [result] = await this.run<{ events: number }>(
      `WITH batch AS (
         SELECT id, tenant_id, type, ordering_key, endpoint_id FROM webhook_events
         WHERE fanned_out_at IS NULL ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED),
       fanned AS (
         INSERT INTO webhook_deliveries (id, endpoint_id, event_id, ordering_key, next_attempt_at, created_at)
         SELECT (substr(b.id::text, 1, 15) || substr(h.hash, 1, 3) || '-8' || substr(h.hash, 4, 3) || '-'
                 || substr(h.hash, 7, 12))::uuid,
                e.id, b.id, b.ordering_key, $1::timestamptz, $1::timestamptz
         FROM batch b JOIN webhook_endpoints e ON e.tenant_id = b.tenant_id
         CROSS JOIN LATERAL (SELECT md5(b.id::text || e.id::text) AS hash) h
         WHERE CASE WHEN b.endpoint_id IS NOT NULL THEN e.id = b.endpoint_id
                    ELSE e.enabled AND (coalesce(cardinality(e.event_types), 0) = 0 OR b.type = ANY (e.event_types)) END
         ON CONFLICT (endpoint_id, event_id) DO NOTHING
         RETURNING event_id),
       marked AS (
         UPDATE webhook_events SET fanned_out_at = $1::timestamptz WHERE id IN (SELECT event_id FROM fanned)),
       unsubscribed AS (
         DELETE FROM webhook_events WHERE id IN (SELECT id FROM batch) AND id NOT IN (SELECT event_id FROM fanned))
       SELECT count(*)::int AS events FROM batch`,
      [now, FAN_OUT_BATCH],
    );
    return result?.events ?? 0;
  }

  /**
   * Takes up to `limit` due deliveries for this process, leased so no other process takes them meanwhile. Fair
   * between tenants: each tenant gets at most its free share (`maxInFlightPerTenant` minus what this process has
   * in flight for it), and the batch takes every tenant's oldest due delivery before any tenant's second.
   */
  private async claim(limit: number): Promise<Claimed[]> {
    const now = this.options.clock();
    const busy = [...this.inFlightByTenant].map(([tenant, count]) => ({ tenant, count }));
    return this.run<Claimed>(
      `WITH busy AS (
         SELECT tenant, count FROM jsonb_to_recordset($6::jsonb) AS b(tenant uuid, count int)),
       ranked AS (
         SELECT c.id, c.next_attempt_at, c.event_id,
                row_number() OVER (PARTITION BY ce.tenant_id ORDER BY c.next_attempt_at, c.event_id) AS turn,
                $5::int - coalesce((SELECT count FROM busy WHERE busy.tenant = ce.tenant_id), 0) AS share
         FROM webhook_deliveries c
         JOIN webhook_endpoints ce ON ce.id = c.endpoint_id
         WHERE c.status = 'pending' AND c.next_attempt_at <= $1::timestamptz
           AND ($4::uuid[] IS NULL OR ce.tenant_id = ANY ($4::uuid[]))
           AND (ce.enabled OR (c.ordering_key IS NULL AND EXISTS (
                 SELECT 1 FROM webhook_events t WHERE t.id = c.event_id AND t.type = 'webhook_endpoint.test')))
           AND (c.ordering_key IS NULL OR (
                 NOT EXISTS (SELECT 1 FROM webhook_deliveries p
                             WHERE p.endpoint_id = c.endpoint_id AND p.ordering_key = c.ordering_key
                               AND p.status = 'pending' AND p.event_id < c.event_id)
             AND NOT EXISTS (SELECT 1 FROM webhook_events u
                             WHERE u.fanned_out_at IS NULL AND u.ordering_key = c.ordering_key AND u.id < c.event_id)))
         ),
       due AS (
         SELECT c.id FROM webhook_deliveries c
         WHERE c.id IN (SELECT r.id FROM ranked r WHERE r.turn <= r.share
                        ORDER BY r.turn, r.next_attempt_at, r.event_id LIMIT $3)
           AND c.status = 'pending' AND c.next_attempt_at <= $1::timestamptz
         FOR UPDATE OF c SKIP LOCKED)
       UPDATE webhook_deliveries d
       SET attempts = d.attempts + 1, last_attempt_at = $1::timestamptz, next_attempt_at = $2::timestamptz
       FROM due, webhook_events v, webhook_endpoints e
       WHERE d.id = due.id AND v.id = d.event_id AND e.id = d.endpoint_id
       RETURNING d.id, d.attempts, d.endpoint_id AS "endpointId", e.tenant_id AS "tenantId", v.id AS "eventId", v.body,
                 v.created_at AS "eventCreatedAt", e.url, e.secret,
                 e.previous_secret AS "previousSecret", e.previous_secret_expires_at AS "previousSecretExpiresAt",
                 e.failing_since AS "failingSince"`,
      [
        now.toISOString(),
        new Date(now.getTime() + LEASE_MS).toISOString(),
        limit,
        this.onlyTenants?.() ?? null,
        this.options.maxInFlightPerTenant,
        JSON.stringify(busy),
      ],
    );
  }

  /** Writes the attempts that finished since last time: one statement, plus one for endpoints whose health changed. */
  private async recordFinished(): Promise<void> {
    if (this.finished.length === 0) return;
    const batch = this.finished;
    this.finished = [];
    try {
      const rows = batch.map(({ delivery, outcome, at }) => {
        const delay = outcome.ok ? null : retryDelayMs(delivery.attempts, this.options.random);
        return {
          id: delivery.id,
          status: outcome.ok ? 'delivered' : delay === null ? 'failed' : 'pending',
          next_attempt_at: delay === null ? null : new Date(at.getTime() + delay).toISOString(),
          status_code: outcome.statusCode,
          duration_ms: outcome.durationMs,
          error: outcome.error,
          excerpt: outcome.excerpt,
          delivered_at: outcome.ok ? at.toISOString() : null,
        };
      });
      if (this.metrics) {
        for (const [index, { outcome }] of batch.entries())
          this.metrics.deliveryAttempt(outcomeOf(outcome), rows[index]!.status !== 'pending');
      }
      await this.run(
        `UPDATE webhook_deliveries d
         SET status = r.status::webhook_delivery_status, next_attempt_at = r.next_attempt_at,
             last_status_code = r.status_code, last_duration_ms = r.duration_ms, last_error = r.error,
             last_response_excerpt = r.excerpt, delivered_at = coalesce(r.delivered_at, d.delivered_at)
         FROM jsonb_to_recordset($1::jsonb) AS r(id uuid, status text, next_attempt_at timestamptz, status_code int,
                                                  duration_ms int, error text, excerpt text, delivered_at timestamptz)
         WHERE d.id = r.id`,
        [JSON.stringify(rows)],
      );
      await this.recordEndpointHealth(batch);
      for (const { delivery, outcome } of batch) {
        if (!outcome.ok) {
          this.logger.info(
            {
              deliveryId: delivery.id,
              endpointId: delivery.endpointId,
              attempt: delivery.attempts,
              error: outcome.error,
            },
            'webhooks: delivery attempt failed',
          );
        }
      }
    } catch (error) {
      // Not recorded: the leases run out and the deliveries are sent again (at least once, never lost).
      this.logger.warn({ err: error, deliveries: batch.length }, 'webhooks: recording attempts failed');
    }
  }

  /**
   * A success ends an endpoint's run of failures; a failure starts one or, after 5 days of nothing but failures,
   * disables the endpoint (`disabledReason: failing`). Only endpoints whose state changes are written.
   */
  private async recordEndpointHealth(batch: Finished[]): Promise<void> {
    const byEndpoint = new Map<string, { ok: boolean; at: Date; failingSince: Date | null }>();
    for (const { delivery, outcome, at } of batch) {
      const seen = byEndpoint.get(delivery.endpointId);
      byEndpoint.set(delivery.endpointId, {
        ok: (seen?.ok ?? false) || outcome.ok,
        at: seen && seen.at > at ? seen.at : at,
        failingSince: delivery.failingSince,
      });
    }
    const changes = [...byEndpoint]
      .filter(([, health]) => !health.ok || health.failingSince !== null)
      .map(([id, health]) => ({ id, ok: health.ok, at: health.at.toISOString() }));
    if (changes.length === 0) return;
    await this.run(
      `UPDATE webhook_endpoints e
       SET failing_since = CASE WHEN r.ok THEN NULL ELSE coalesce(e.failing_since, r.at) END,
           enabled = e.enabled AND (r.ok OR coalesce(e.failing_since, r.at) > r.at - $2::interval),
           disabled_reason = CASE WHEN e.enabled AND NOT r.ok AND coalesce(e.failing_since, r.at) <= r.at - $2::interval
                                  THEN 'failing' ELSE e.disabled_reason END
       FROM jsonb_to_recordset($1::jsonb) AS r(id uuid, ok boolean, at timestamptz)
       WHERE e.id = r.id`,
      [JSON.stringify(changes), `${DISABLE_AFTER_FAILING_MS / 1000} seconds`],
    );
  }
}
