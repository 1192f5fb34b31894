import type { Prisma, WebhookDelivery, WebhookEndpoint, WebhookEvent } from '../generated/client';
import type { ClaimParams, OutboxEventRow } from './parts';
import { type Queryable, sendStatement } from './send';

/**
 * The webhook outbox: events written with the change that causes them, fanned out to deliveries, claimed (leased)
 * by the dispatcher, their attempts recorded, and the history cleaned up.
 */

/** A delivery a dispatcher has claimed (until `leasedUntil`): what to send, and where. */
export type ClaimedDeliveryRow = Pick<WebhookDelivery, 'id' | 'attempts' | 'endpointId' | 'tenantId' | 'eventId'> &
  Pick<WebhookEvent, 'body'> & { eventCreatedAt: WebhookEvent['createdAt']; leasedUntil: Date } & Pick<
    WebhookEndpoint,
    'url' | 'secret' | 'previousSecret' | 'previousSecretExpiresAt' | 'failingSince'
  >;

const DELETE_OLD_WEBHOOK_HISTORY = `DELETE FROM webhook_events WHERE id IN (
           SELECT event.id FROM webhook_events event
           WHERE event.id < :before::uuid AND event.fanned_out_at IS NOT NULL
             AND NOT EXISTS (SELECT 1 FROM webhook_deliveries delivery
                             WHERE delivery.event_id = event.id AND delivery.status = 'pending')
             AND (:onlyTenants::uuid[] IS NULL OR event.tenant_id = ANY (:onlyTenants::uuid[]))
           ORDER BY event.id LIMIT :batch)
         RETURNING id`;

/** Deletes up to `batch` events older than `before` whose deliveries are all done (with those deliveries). */
export const deleteOldWebhookHistory = (
  db: Queryable,
  params: { before: string; batch: number; onlyTenants: readonly string[] | null },
) => sendStatement<Pick<WebhookEvent, 'id'>>(db, DELETE_OLD_WEBHOOK_HISTORY, params);

const FAN_OUT_WEBHOOK_EVENTS = `WITH batch AS (
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
       SELECT (SELECT count(*) FROM batch)::int AS events, (SELECT count(*) FROM fanned)::int AS deliveries`;

/**
 * One outbox batch → deliveries, in one statement: each event goes to the tenant's enabled endpoints whose filter
 * takes its type (a test event to its one endpoint); every event of the batch is marked. A delivery's id keeps its
 * event's UUIDv7 timestamp (so deliveries sort by time like every id) and takes the rest from a hash of the event
 * and endpoint ids: unique per pair, and the same if computed twice.
 */
export const fanOutWebhookEvents = (db: Queryable, params: { now: string; batch: number }) =>
  sendStatement<{ events: number; deliveries: number }>(db, FAN_OUT_WEBHOOK_EVENTS, params);

const CLAIM_DUE_DELIVERIES = `WITH RECURSIVE
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
                 endpoint.failing_since AS "failingSince", delivery.leased_until AS "leasedUntil"`;

/**
 * Leases up to `limit` due deliveries, so no other process takes them meanwhile. Fair
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
export const claimDueDeliveries = (
  db: Queryable,
  params: ClaimParams & { maxInFlight: number; tenantCursor: string },
) => sendStatement<ClaimedDeliveryRow>(db, CLAIM_DUE_DELIVERIES, params);

const RECORD_DELIVERY_ATTEMPTS = `UPDATE webhook_deliveries delivery
         SET status = attempt.status::webhook_delivery_status, next_attempt_at = attempt.next_attempt_at,
             leased_until = NULL, last_status_code = attempt.status_code, last_duration_ms = attempt.duration_ms,
             last_error = attempt.error, last_response_excerpt = attempt.excerpt,
             delivered_at = coalesce(attempt.delivered_at, delivery.delivered_at)
         FROM jsonb_to_recordset(:attempts::jsonb) AS attempt(id uuid, status text, next_attempt_at timestamptz,
                                                        status_code int, duration_ms int, error text, excerpt text,
                                                        delivered_at timestamptz)
         -- the ids as an array too, so the planner knows how many (see recordEndpointHealth)
         WHERE delivery.id = attempt.id AND delivery.id = ANY (:ids::uuid[])`;

/** The finished attempts (JSON records), each delivery's status, next attempt and last response. */
export const recordDeliveryAttempts = (db: Queryable, params: { attempts: string; ids: string[] }) =>
  sendStatement(db, RECORD_DELIVERY_ATTEMPTS, params);

const RECORD_ENDPOINT_HEALTH = `UPDATE webhook_endpoints endpoint
       SET failing_since = CASE WHEN change.ok THEN NULL ELSE coalesce(endpoint.failing_since, change.at) END,
           enabled = endpoint.enabled
                     AND (change.ok OR coalesce(endpoint.failing_since, change.at) > change.at - :disableAfter::interval),
           disabled_reason = CASE WHEN endpoint.enabled AND NOT change.ok
                                       AND coalesce(endpoint.failing_since, change.at) <= change.at - :disableAfter::interval
                                  THEN 'failing' ELSE endpoint.disabled_reason END
       FROM jsonb_to_recordset(:changes::jsonb) AS change(id uuid, ok boolean, at timestamptz)
       -- the id list as an array too: its length is known to the planner (a record set is guessed at 100 rows,
       -- which makes a sequential scan of every endpoint look cheaper than the lookups)
       WHERE endpoint.id = change.id AND endpoint.id = ANY (:ids::uuid[])`;

/** Endpoint health: a success ends a run of failures; failing past `disableAfter` disables the endpoint. */
export const updateEndpointHealth = (db: Queryable, params: { changes: string; disableAfter: string; ids: string[] }) =>
  sendStatement(db, RECORD_ENDPOINT_HEALTH, params);

/** Where a dispatcher's first claim starts its walk over tenants. */
export const FIRST_TENANT_CURSOR = '00000000-0000-0000-0000-000000000000';

/**
 * Where the claim's walk over tenants got to: the last tenant served, in walk order (those after `cursor`, then
 * those up to it). UUIDs compare as PostgreSQL orders them: lowercase hex, same layout.
 */
export function lastTenantInWalk(cursor: string, claimed: ReadonlyArray<{ tenantId: string }>): string {
  const served = claimed.map((delivery) => delivery.tenantId);
  if (served.length === 0) return cursor;
  const wrapped = served.filter((tenant) => tenant <= cursor);
  return (wrapped.length > 0 ? wrapped : served).reduce((last, tenant) => (tenant > last ? tenant : last));
}

/** Writes a webhook outbox row inside the transaction of the change it records. */
export async function insertWebhookEvent(tx: Prisma.TransactionClient, row: OutboxEventRow): Promise<void> {
  await tx.webhookEvent.create({ data: row });
}
