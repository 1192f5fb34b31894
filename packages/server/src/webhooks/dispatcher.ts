import type { Db } from '@works-api/prisma';
import { OutboxLoop } from '../jobs/outbox-loop';
import {
  claimDueDeliveries,
  FIRST_TENANT_CURSOR,
  lastTenantInWalk,
  type ClaimedDeliveryRow,
  deleteOldWebhookHistory,
  fanOutWebhookEvents,
  recordDeliveryAttempts,
  updateEndpointHealth,
} from '@works-api/prisma';
import type { Lookup } from './addresses';
import { DISABLE_AFTER_FAILING_MS, retryDelayMs } from './backoff';
import { firstIdAt, HISTORY_RETENTION_MS } from './events';
import { systemLookup } from './resolver';
import { activeSecrets, signedHeaders } from './signing';
import type { Logger } from '../observability/logger';
import type { DeliveryOutcome, Metrics } from '../observability/metrics';
import type { Tracing } from '../observability/tracing';
import { type AttemptOutcome, sendEvent } from './send';
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
type Claimed = ClaimedDeliveryRow;

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
  private tenantCursor = FIRST_TENANT_CURSOR;
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
      const rows = await deleteOldWebhookHistory(this.db, {
        before,
        batch: CLEANUP_BATCH,
        onlyTenants: this.onlyTenants?.() ?? null,
      });
      deleted += rows.length;
      if (rows.length < CLEANUP_BATCH) break;
    }
    if (deleted > 0) this.logger.info({ deleted }, 'webhooks: history older than 30 days deleted');
    return deleted;
  }

  /**
   * One outbox batch → deliveries (`fanOutWebhookEvents`); events nobody subscribes to stay in the tenant's events
   * feed until the clean-up. Answers how many events it took and how many deliveries it made.
   */
  private async fanOut(): Promise<{ events: number; deliveries: number }> {
    const now = this.options.clock().toISOString();
    const [result] = await fanOutWebhookEvents(this.db, { now, batch: FAN_OUT_BATCH });
    return { events: result?.events ?? 0, deliveries: result?.deliveries ?? 0 };
  }

  /** Takes up to `limit` due deliveries for this process, fair between tenants (`claimDueDeliveries`). */
  private async claim(limit: number): Promise<Claimed[]> {
    const now = this.options.clock();
    const claimed = await claimDueDeliveries(this.db, {
      now: now.toISOString(),
      leaseEnds: new Date(now.getTime() + LEASE_MS).toISOString(),
      limit,
      onlyTenants: this.onlyTenants?.() ?? null,
      maxInFlight: this.options.maxInFlightPerTenant,
      tenantCursor: this.tenantCursor,
    });
    this.tenantCursor = lastTenantInWalk(this.tenantCursor, claimed);
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
      await recordDeliveryAttempts(this.db, { attempts: JSON.stringify(rows), ids: rows.map((row) => row.id) });
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
    await updateEndpointHealth(this.db, {
      changes: JSON.stringify(changes),
      disableAfter: `${DISABLE_AFTER_FAILING_MS / 1000} seconds`,
      ids: changes.map((change) => change.id),
    });
  }
}
