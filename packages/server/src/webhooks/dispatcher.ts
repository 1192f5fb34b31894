import type { Db } from '@works-api/prisma';
import { OutboxLoop } from '../jobs/outbox-loop';
import { sendStatement, type StatementParams } from '@works-api/prisma';
import type { Lookup } from './addresses';
import { DISABLE_AFTER_FAILING_MS, retryDelayMs } from './backoff';
import { firstIdAt, HISTORY_RETENTION_MS } from './events';
import { systemLookup } from './resolver';
import { activeSecrets, signedHeaders } from './signing';
import type { Logger } from '../observability/logger';
import type { DeliveryOutcome, Metrics } from '../observability/metrics';
import type { Tracing } from '../observability/tracing';
import { type AttemptOutcome, sendEvent } from './send';
import type { WebhookDelivery, WebhookEndpoint, WebhookEvent } from '@works-api/prisma/client';
import { secretBoxOf, webhookSecretSlot } from '@works-api/prisma';

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
   * Deliveries of one tenant in flight at once, across every dispatcher on the database
   * (WEBHOOK_MAX_IN_FLIGHT_PER_TENANT): a tenant whose endpoints never answer holds at most this many slots, the
   * rest serve the other tenants.
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

/** A delivery this process has claimed (until `leasedUntil`): what to send, and where. */
type Claimed = Pick<WebhookDelivery, 'id' | 'attempts' | 'endpointId' | 'tenantId' | 'eventId'> &
  Pick<WebhookEvent, 'body'> & { eventCreatedAt: WebhookEvent['createdAt']; leasedUntil: Date } & Pick<
    WebhookEndpoint,
    'url' | 'secret' | 'previousSecret' | 'previousSecretExpiresAt' | 'failingSince'
  >;

interface Finished {
  delivery: Claimed;
  outcome: AttemptOutcome;
  at: Date;
  /** Real time (Date.now()) until which recording it is worth retrying: its lease, read on this process's clock. */
  keepUntil: number;
}

const FAN_OUT_BATCH = 200;
/**
 * A nudge waits this long before the round starts, so a burst of commits is fanned out and claimed in one round
 * (a few statements per batch instead of per event) at a cost of milliseconds of delivery lag.
 */
const NUDGE_BATCH_WINDOW_MS = 10;
const CLEANUP_EVERY_MS = 60 * 60 * 1000;
const CLEANUP_BATCH = 1000;
/** Batches per clean-up round: every event is kept for the events feed now, not only those with deliveries. */
const CLEANUP_MAX_BATCHES = 100;

const outcomeOf = (outcome: AttemptOutcome): DeliveryOutcome =>
  outcome.ok ? 'delivered' : outcome.statusCode !== null ? 'rejected' : 'unreachable';

/** A claimed delivery is someone's for this long: a process killed mid-send leaves it due again afterwards. */
const LEASE_MS = 60_000;

const NIL_UUID = '00000000-0000-0000-0000-000000000000';

/**
 * Where the claim's walk over tenants got to: the last tenant served, in walk order (those after `cursor`, then
 * those up to it). UUIDs compare as PostgreSQL orders them: lowercase hex, same layout.
 */
function lastInWalk(cursor: string, claimed: ReadonlyArray<{ tenantId: string }>): string {
  const served = claimed.map((delivery) => delivery.tenantId);
  if (served.length === 0) return cursor;
  const wrapped = served.filter((tenant) => tenant <= cursor);
  return (wrapped.length > 0 ? wrapped : served).reduce((last, tenant) => (tenant > last ? tenant : last));
}

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
  private readonly loop: OutboxLoop;
  /** When this process last claimed, and whether that claim took as many as it could (there may be more). */
  private lastClaimAt = 0;
  private lastClaimFull = false;
  /** Where the next claim's walk over tenants starts (after this id, wrapping around): round robin. */
  private tenantCursor = NIL_UUID;
  private finished: Finished[] = [];
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
    this.loop = new OutboxLoop({
      pollIntervalMs: this.options.pollIntervalMs,
      maxInFlight: this.options.maxInFlight,
      nudgeDelayMs: NUDGE_BATCH_WINDOW_MS,
      round: () => this.round(),
      // The database may be briefly away (a restart, a failover): the loop tries again at every poll.
      onRoundError: (error, failing) =>
        this.logger.warn({ err: error, ...failing }, 'webhooks: dispatcher round failed; retrying at every poll'),
      onResumed: (failed) => this.logger.info(failed, 'webhooks: dispatcher resumed'),
    });
  }

  /** Runs until `stop`, waking at once when this process commits an outbox row. */
  start(): this {
    this.unsubscribe = this.db.outbox.webhooks.on(() => this.nudge());
    this.loop.start();
    return this;
  }

  /** The loop's state, for the job that runs it (jobs/). */
  get loopState(): { failingSince: Date | undefined; inFlight: number } {
    return { failingSince: this.loop.failingSince, inFlight: this.loop.inFlightCount };
  }

  /** Look again now (a commit, a finished attempt): after a short batch window, when the loop is asleep. */
  nudge(): void {
    this.loop.nudge();
  }

  /**
   * One full round, waiting for every attempt it starts: for tests that drive the clock themselves. Returns how
   * many deliveries it sent.
   */
  async runOnce(): Promise<number> {
    while ((await this.fanOut()).events === FAN_OUT_BATCH);
    await this.recordFinished();
    const claimed = await this.claim(this.options.maxInFlight);
    for (const delivery of claimed) this.launch(delivery);
    await this.loop.settled();
    await this.recordFinished();
    return claimed.length;
  }

  /**
   * Stops claiming, waits for the attempts in flight (up to `timeoutMs`) and records them. Resolves true when
   * everything in flight finished; what did not is sent again after its lease, by whichever process is running.
   */
  async stop(timeoutMs: number): Promise<boolean> {
    this.unsubscribe?.();
    const inTime = await this.loop.stop(timeoutMs);
    await this.recordFinished().catch((error: unknown) =>
      this.logger.warn({ err: error }, 'webhooks: recording attempts failed'),
    );
    return inTime;
  }

  /**
   * The attempts that finished (first: what went out must be written even if the rest of the round fails), clean-up
   * when due, fan-out, then as many due deliveries as there is room for.
   */
  private async round(): Promise<boolean> {
    const recorded = this.finished.length;
    await this.recordFinished();
    if (Date.now() - this.lastCleanup >= this.options.cleanupIntervalMs) {
      this.lastCleanup = Date.now();
      await this.cleanUp();
    }
    const fanned = await this.fanOut();
    let busy = fanned.events === FAN_OUT_BATCH;
    const free = this.loop.free;
    // A round woken by writes whose events went to no endpoint (fanned out to nothing), with no attempt finished and
    // the last claim not full, has nothing new to claim: the next poll looks for retries falling due and other
    // processes' deliveries. So a write into a tenant without webhooks costs the dispatcher one statement, not two.
    const claimDue =
      fanned.deliveries > 0 ||
      recorded > 0 ||
      this.lastClaimFull ||
      Date.now() - this.lastClaimAt >= this.options.pollIntervalMs;
    if (free > 0 && !this.loop.stopped && claimDue) {
      this.lastClaimAt = Date.now();
      const claimed = await this.claim(free);
      for (const delivery of claimed) this.launch(delivery);
      this.lastClaimFull = claimed.length === free;
      busy ||= this.lastClaimFull;
    }
    return busy;
  }

  /** The signing secrets in plaintext: they are stored sealed, each bound to its column (prisma/src/secret-box.ts). */
  private openSecrets(delivery: Claimed, at: Date): string[] {
    const box = secretBoxOf(this.db);
    return activeSecrets(delivery, at).map((secret, index) =>
      box.open(secret, webhookSecretSlot(delivery.endpointId, index === 0 ? 'secret' : 'previous_secret')),
    );
  }

  private launch(delivery: Claimed): void {
    const at = this.options.clock();
    let secrets: string[];
    try {
      secrets = this.openSecrets(delivery, at);
    } catch (error) {
      // A secret that does not open (moved from another row, altered, or its key gone) fails this attempt alone:
      // nothing is sent unsigned, and the other deliveries of the round go out.
      this.logger.error({ err: error, endpointId: delivery.endpointId }, 'webhooks: a signing secret does not open');
      const outcome = { ok: false, statusCode: null, excerpt: null, durationMs: 0 } as const;
      this.finished.push({
        delivery,
        outcome: { ...outcome, error: 'the signing secret could not be read' },
        at,
        keepUntil: this.leaseEnd(delivery, at),
      });
      return;
    }
    const headers: Record<string, string> = { ...signedHeaders(delivery.eventId, delivery.body, secrets, at) };
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
    this.loop.track(
      traced.then((outcome) => {
        const at = this.options.clock();
        this.finished.push({ delivery, outcome, at, keepUntil: this.leaseEnd(delivery, at) });
      }),
    );
  }

  /** When the lease of `delivery` ends, in real time (Date.now()), seen at `at` on the dispatcher's clock. */
  private leaseEnd(delivery: Claimed, at: Date): number {
    return Date.now() + (new Date(delivery.leasedUntil).getTime() - at.getTime());
  }

  /**
   * Deletes the history older than 30 days (events whose deliveries are all done, with those deliveries), in
   * bounded batches; returns how many events went.
   */
  async cleanUp(): Promise<number> {
    const before = firstIdAt(new Date(this.options.clock().getTime() - HISTORY_RETENTION_MS));
    let deleted = 0;
    for (let batch = 0; batch < CLEANUP_MAX_BATCHES; batch++) {
      const rows = await this.run<Pick<WebhookEvent, 'id'>>(
        `DELETE FROM webhook_events WHERE id IN (
           SELECT event.id FROM webhook_events event
           WHERE event.id < :before::uuid AND event.fanned_out_at IS NOT NULL
             AND NOT EXISTS (SELECT 1 FROM webhook_deliveries delivery
                             WHERE delivery.event_id = event.id AND delivery.status = 'pending')
             AND (:onlyTenants::uuid[] IS NULL OR event.tenant_id = ANY (:onlyTenants::uuid[]))
           ORDER BY event.id LIMIT :batch)
         RETURNING id`,
        { before, batch: CLEANUP_BATCH, onlyTenants: this.onlyTenants?.() ?? null },
      );
      deleted += rows.length;
      if (rows.length < CLEANUP_BATCH) break;
    }
    if (deleted > 0) this.logger.info({ deleted }, 'webhooks: history older than 30 days deleted');
    return deleted;
  }

  private run<Row>(sql: string, params: StatementParams): Promise<Row[]> {
    return sendStatement<Row>(this.db, sql, params);
  }

  /**
   * One outbox batch → deliveries, in one statement: each event goes to the tenant's enabled endpoints whose
   * filter takes its type (a test event to its one endpoint); every event of the batch is marked, those nobody
   * subscribes to included: they stay in the tenant's events feed (domain/events/feed.ts) until the clean-up. A
   * delivery's id keeps its event's UUIDv7 timestamp (so deliveries sort by time like every id) and takes the rest
   * from a hash of the event and endpoint ids: unique per pair, and the same if computed twice. Answers how many
   * events it took and how many deliveries it made.
   */
  private async fanOut(): Promise<{ events: number; deliveries: number }> {
    const now = this.options.clock().toISOString();
    const [result] = await this.run<{ events: number; deliveries: number }>(
      `WITH batch AS (
         SELECT id, tenant_id, type, ordering_key, endpoint_id FROM webhook_events
         WHERE fanned_out_at IS NULL ORDER BY id LIMIT :batch FOR UPDATE SKIP LOCKED),
       fanned AS (
         INSERT INTO webhook_deliveries (id, endpoint_id, tenant_id, event_id, ordering_key, next_attempt_at,
                                         created_at)
         SELECT (substr(event.id::text, 1, 15) || substr(pair.hash, 1, 3) || '-8' || substr(pair.hash, 4, 3) || '-'
                 || substr(pair.hash, 7, 12))::uuid,
                endpoint.id, event.tenant_id, event.id, event.ordering_key, :now::timestamptz, :now::timestamptz
         FROM batch event JOIN webhook_endpoints endpoint ON endpoint.tenant_id = event.tenant_id
         CROSS JOIN LATERAL (SELECT md5(event.id::text || endpoint.id::text) AS hash) pair
         WHERE CASE WHEN event.endpoint_id IS NOT NULL THEN endpoint.id = event.endpoint_id
                    ELSE endpoint.enabled AND (coalesce(cardinality(endpoint.event_types), 0) = 0
                                               OR event.type = ANY (endpoint.event_types)) END
         ON CONFLICT (endpoint_id, event_id) DO NOTHING
         RETURNING event_id),
       marked AS (
         UPDATE webhook_events SET fanned_out_at = :now::timestamptz WHERE id IN (SELECT id FROM batch))
       SELECT (SELECT count(*) FROM batch)::int AS events, (SELECT count(*) FROM fanned)::int AS deliveries`,
      { now, batch: FAN_OUT_BATCH },
    );
    return { events: result?.events ?? 0, deliveries: result?.deliveries ?? 0 };
  }

  /**
   * Takes up to `limit` due deliveries for this process, leased so no other process takes them meanwhile. Fair
   * between tenants, at a cost that does not grow with the number of due deliveries:
   * - it walks the tenants that have pending deliveries (one index probe each, a skip scan), round robin from
   *   where the previous claim stopped, and stops once `limit` tenants have something to send;
   * - each tenant gets at most its free share: `maxInFlightPerTenant` minus its leased deliveries, counted in the
   *   database, so the cap holds across every dispatcher process;
   * - from each, its oldest due deliveries that the ordering rule lets go (at most the share);
   * - the batch takes every tenant's first before any tenant's second.
   * Two processes that claim at once pick the same rows of a tenant first (same order, whatever their cursors);
   * the `FOR UPDATE SKIP LOCKED` step then leaves the second without them rather than moving on to further rows.
   * Racing claims can overshoot the cap only when they see different due rows (one's clock made a retry due that
   * the other's did not): by those few rows, until they finish.
   */
  private async claim(limit: number): Promise<Claimed[]> {
    const now = this.options.clock();
    const claimed = await this.run<Claimed>(
      `WITH RECURSIVE
       after_cursor (tenant_id) AS (
         (SELECT tenant_id FROM webhook_deliveries
          WHERE status = 'pending' AND tenant_id > :tenantCursor::uuid AND (:onlyTenants::uuid[] IS NULL OR tenant_id = ANY (:onlyTenants::uuid[]))
          ORDER BY tenant_id LIMIT 1)
         UNION ALL
         SELECT (SELECT later.tenant_id FROM webhook_deliveries later
                 WHERE later.status = 'pending' AND later.tenant_id > previous.tenant_id
                   AND (:onlyTenants::uuid[] IS NULL OR later.tenant_id = ANY (:onlyTenants::uuid[]))
                 ORDER BY later.tenant_id LIMIT 1)
         FROM after_cursor previous WHERE previous.tenant_id IS NOT NULL),
       up_to_cursor (tenant_id) AS (
         (SELECT tenant_id FROM webhook_deliveries
          WHERE status = 'pending' AND tenant_id <= :tenantCursor::uuid AND (:onlyTenants::uuid[] IS NULL OR tenant_id = ANY (:onlyTenants::uuid[]))
          ORDER BY tenant_id LIMIT 1)
         UNION ALL
         SELECT (SELECT later.tenant_id FROM webhook_deliveries later
                 WHERE later.status = 'pending' AND later.tenant_id > previous.tenant_id AND later.tenant_id <= :tenantCursor::uuid
                   AND (:onlyTenants::uuid[] IS NULL OR later.tenant_id = ANY (:onlyTenants::uuid[]))
                 ORDER BY later.tenant_id LIMIT 1)
         FROM up_to_cursor previous WHERE previous.tenant_id IS NOT NULL),
       walk AS (
         SELECT tenant_id, false AS wrapped FROM after_cursor WHERE tenant_id IS NOT NULL
         UNION ALL
         SELECT tenant_id, true AS wrapped FROM up_to_cursor WHERE tenant_id IS NOT NULL),
       served AS (
         SELECT walk.tenant_id, walk.wrapped, picked.ids
         FROM walk
         CROSS JOIN LATERAL (
           SELECT :maxInFlight::int - count(*)::int AS share FROM webhook_deliveries leased
           WHERE leased.tenant_id = walk.tenant_id AND leased.leased_until > :now::timestamptz) slots
         CROSS JOIN LATERAL (
           -- At most the cap, then the share: a constant LIMIT keeps the planner's estimate (and so the plan, and
           -- PostgreSQL's choice to JIT-compile it) small.
           SELECT (array_agg(candidate.id ORDER BY candidate.next_attempt_at, candidate.event_id, candidate.id))
                    [1 : least(slots.share, :limit::int)] AS ids
           FROM (
             SELECT delivery.id, delivery.next_attempt_at, delivery.event_id
             FROM webhook_deliveries delivery
             -- Each row's endpoint by a lookup (OFFSET 0 keeps it a nested loop): a join could be planned as a
             -- hash join over all the tenant's due rows, then a sort, when the planner's average tenant is small;
             -- this way the scan stays in index order and stops at the LIMIT, however many rows the tenant has.
             CROSS JOIN LATERAL (SELECT endpoint.enabled FROM webhook_endpoints endpoint
                                 WHERE endpoint.id = delivery.endpoint_id OFFSET 0) endpoint
             WHERE slots.share > 0 AND delivery.tenant_id = walk.tenant_id AND delivery.status = 'pending'
               AND delivery.next_attempt_at <= :now::timestamptz
               -- a disabled endpoint still gets its test events
               AND (endpoint.enabled OR (delivery.ordering_key IS NULL AND EXISTS (
                          SELECT 1 FROM webhook_events test
                          WHERE test.id = delivery.event_id AND test.type = 'webhook_endpoint.test')))
               -- the ordering rule: no earlier event of the same request still pending or not yet fanned out
               AND (delivery.ordering_key IS NULL OR (
                     NOT EXISTS (SELECT 1 FROM webhook_deliveries earlier
                                 WHERE earlier.endpoint_id = delivery.endpoint_id
                                   AND earlier.ordering_key = delivery.ordering_key
                                   AND earlier.status = 'pending' AND earlier.event_id < delivery.event_id)
                 AND NOT EXISTS (SELECT 1 FROM webhook_events unfanned
                                 WHERE unfanned.fanned_out_at IS NULL AND unfanned.ordering_key = delivery.ordering_key
                                   AND unfanned.id < delivery.event_id)))
             ORDER BY delivery.next_attempt_at, delivery.event_id, delivery.id
             LIMIT :maxInFlight::int) candidate) picked
         WHERE cardinality(picked.ids) > 0
         LIMIT :limit::int),
       due AS (
         -- by primary key (an IN list here can become a hash join over every due row)
         SELECT delivery.id FROM webhook_deliveries delivery
         WHERE delivery.id = ANY (ARRAY(
                 SELECT chosen.id
                 FROM served CROSS JOIN LATERAL unnest(served.ids) WITH ORDINALITY AS chosen(id, turn)
                 ORDER BY chosen.turn, served.wrapped, served.tenant_id LIMIT :limit::int))
           AND delivery.status = 'pending' AND delivery.next_attempt_at <= :now::timestamptz
         FOR UPDATE OF delivery SKIP LOCKED)
       UPDATE webhook_deliveries delivery
       SET attempts = delivery.attempts + 1, last_attempt_at = :now::timestamptz, next_attempt_at = :leaseEnds::timestamptz,
           leased_until = :leaseEnds::timestamptz
       FROM due, webhook_events event, webhook_endpoints endpoint
       WHERE delivery.id = due.id AND event.id = delivery.event_id AND endpoint.id = delivery.endpoint_id
       RETURNING delivery.id, delivery.attempts, delivery.endpoint_id AS "endpointId", delivery.tenant_id AS "tenantId",
                 event.id AS "eventId", event.body, event.created_at AS "eventCreatedAt", endpoint.url, endpoint.secret,
                 endpoint.previous_secret AS "previousSecret",
                 endpoint.previous_secret_expires_at AS "previousSecretExpiresAt",
                 endpoint.failing_since AS "failingSince", delivery.leased_until AS "leasedUntil"`,
      {
        now: now.toISOString(),
        leaseEnds: new Date(now.getTime() + LEASE_MS).toISOString(),
        limit,
        onlyTenants: this.onlyTenants?.() ?? null,
        maxInFlight: this.options.maxInFlightPerTenant,
        tenantCursor: this.tenantCursor,
      },
    );
    this.tenantCursor = lastInWalk(this.tenantCursor, claimed);
    return claimed;
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
      await this.run(
        `UPDATE webhook_deliveries delivery
         SET status = attempt.status::webhook_delivery_status, next_attempt_at = attempt.next_attempt_at,
             leased_until = NULL, last_status_code = attempt.status_code, last_duration_ms = attempt.duration_ms,
             last_error = attempt.error, last_response_excerpt = attempt.excerpt,
             delivered_at = coalesce(attempt.delivered_at, delivery.delivered_at)
         FROM jsonb_to_recordset(:attempts::jsonb) AS attempt(id uuid, status text, next_attempt_at timestamptz,
                                                        status_code int, duration_ms int, error text, excerpt text,
                                                        delivered_at timestamptz)
         -- the ids as an array too, so the planner knows how many (see recordEndpointHealth)
         WHERE delivery.id = attempt.id AND delivery.id = ANY (:ids::uuid[])`,
        { attempts: JSON.stringify(rows), ids: rows.map((row) => row.id) },
      );
      if (this.metrics) {
        for (const [index, { outcome }] of batch.entries())
          this.metrics.deliveryAttempt(outcomeOf(outcome), rows[index]!.status !== 'pending');
      }
      await this.recordEndpointHealth(batch).catch((error: unknown) =>
        this.logger.warn({ err: error }, 'webhooks: recording endpoint health failed'),
      );
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
      // Not recorded (the database is away, failing over?): tried again at the next rounds while the leases hold,
      // so that a short outage sends nothing twice. Past its lease a delivery is sent again (at least once).
      const now = Date.now();
      const kept = batch.filter((finished) => finished.keepUntil > now);
      this.finished.unshift(...kept);
      this.logger.warn(
        { err: error, deliveries: batch.length, retried: kept.length },
        'webhooks: recording attempts failed',
      );
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
      `UPDATE webhook_endpoints endpoint
       SET failing_since = CASE WHEN change.ok THEN NULL ELSE coalesce(endpoint.failing_since, change.at) END,
           enabled = endpoint.enabled
                     AND (change.ok OR coalesce(endpoint.failing_since, change.at) > change.at - :disableAfter::interval),
           disabled_reason = CASE WHEN endpoint.enabled AND NOT change.ok
                                       AND coalesce(endpoint.failing_since, change.at) <= change.at - :disableAfter::interval
                                  THEN 'failing' ELSE endpoint.disabled_reason END
       FROM jsonb_to_recordset(:changes::jsonb) AS change(id uuid, ok boolean, at timestamptz)
       -- the id list as an array too: its length is known to the planner (a record set is guessed at 100 rows,
       -- which makes a sequential scan of every endpoint look cheaper than the lookups)
       WHERE endpoint.id = change.id AND endpoint.id = ANY (:ids::uuid[])`,
      {
        changes: JSON.stringify(changes),
        disableAfter: `${DISABLE_AFTER_FAILING_MS / 1000} seconds`,
        ids: changes.map((change) => change.id),
      },
    );
  }
}
