-- Written by packages/server/test/integration/statement-plans.test.ts: the statements each operation sends
-- (in text order), with the shape of their plans on PostgreSQL. UPDATE_STATEMENT_PLANS=1 rewrites the file
-- (docs/development.md).

-- operation: dispatcher round

UPDATE webhook_deliveries delivery
SET status = attempt.status::webhook_delivery_status, next_attempt_at = attempt.next_attempt_at,
    leased_until = NULL, last_status_code = attempt.status_code, last_duration_ms = attempt.duration_ms,
    last_error = attempt.error, last_response_excerpt = attempt.excerpt,
    delivered_at = coalesce(attempt.delivered_at, delivery.delivered_at)
FROM jsonb_to_recordset($1::jsonb) AS attempt(id uuid, status text, next_attempt_at timestamptz,
                                               status_code int, duration_ms int, error text, excerpt text,
                                               delivered_at timestamptz)
-- the ids as an array too, so the planner knows how many (see recordEndpointHealth)
WHERE delivery.id = attempt.id AND delivery.id = ANY ($2::uuid[]);
-- plan:
--   Update on webhook_deliveries delivery
--     Hash Join
--       Index Scan using webhook_deliveries_pkey on webhook_deliveries delivery
--       Hash
--         Function Scan on jsonb_to_recordset attempt

UPDATE webhook_endpoints endpoint
SET failing_since = CASE WHEN change.ok THEN NULL ELSE coalesce(endpoint.failing_since, change.at) END,
    enabled = endpoint.enabled
              AND (change.ok OR coalesce(endpoint.failing_since, change.at) > change.at - $1::interval),
    disabled_reason = CASE WHEN endpoint.enabled AND NOT change.ok
                                AND coalesce(endpoint.failing_since, change.at) <= change.at - $1::interval
                           THEN 'failing' ELSE endpoint.disabled_reason END
FROM jsonb_to_recordset($2::jsonb) AS change(id uuid, ok boolean, at timestamptz)
-- the id list as an array too: its length is known to the planner (a record set is guessed at 100 rows,
-- which makes a sequential scan of every endpoint look cheaper than the lookups)
WHERE endpoint.id = change.id AND endpoint.id = ANY ($3::uuid[]);
-- plan:
--   Update on webhook_endpoints endpoint
--     Hash Join
--       Function Scan on jsonb_to_recordset change
--       Hash
--         Seq Scan on webhook_endpoints endpoint

WITH RECURSIVE
after_cursor (tenant_id) AS (
  (SELECT tenant_id FROM webhook_deliveries
   WHERE status = 'pending' AND tenant_id > $1::uuid AND ($2::uuid[] IS NULL OR tenant_id = ANY ($2::uuid[]))
   ORDER BY tenant_id LIMIT 1)
  UNION ALL
  SELECT (SELECT later.tenant_id FROM webhook_deliveries later
          WHERE later.status = 'pending' AND later.tenant_id > previous.tenant_id
            AND ($2::uuid[] IS NULL OR later.tenant_id = ANY ($2::uuid[]))
          ORDER BY later.tenant_id LIMIT 1)
  FROM after_cursor previous WHERE previous.tenant_id IS NOT NULL),
up_to_cursor (tenant_id) AS (
  (SELECT tenant_id FROM webhook_deliveries
   WHERE status = 'pending' AND tenant_id <= $1::uuid AND ($2::uuid[] IS NULL OR tenant_id = ANY ($2::uuid[]))
   ORDER BY tenant_id LIMIT 1)
  UNION ALL
  SELECT (SELECT later.tenant_id FROM webhook_deliveries later
          WHERE later.status = 'pending' AND later.tenant_id > previous.tenant_id AND later.tenant_id <= $1::uuid
            AND ($2::uuid[] IS NULL OR later.tenant_id = ANY ($2::uuid[]))
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
    SELECT $3::int - count(*)::int AS share FROM webhook_deliveries leased
    WHERE leased.tenant_id = walk.tenant_id AND leased.leased_until > $4::timestamptz) slots
  CROSS JOIN LATERAL (
    -- At most the cap, then the share: a constant LIMIT keeps the planner's estimate (and so the plan, and
    -- PostgreSQL's choice to JIT-compile it) small.
    SELECT (array_agg(candidate.id ORDER BY candidate.next_attempt_at, candidate.event_id, candidate.id))
             [1 : least(slots.share, $5::int)] AS ids
    FROM (
      SELECT delivery.id, delivery.next_attempt_at, delivery.event_id
      FROM webhook_deliveries delivery
      -- Each row's endpoint by a lookup (OFFSET 0 keeps it a nested loop): a join could be planned as a
      -- hash join over all the tenant's due rows, then a sort, when the planner's average tenant is small;
      -- this way the scan stays in index order and stops at the LIMIT, however many rows the tenant has.
      CROSS JOIN LATERAL (SELECT endpoint.enabled FROM webhook_endpoints endpoint
                          WHERE endpoint.id = delivery.endpoint_id OFFSET 0) endpoint
      WHERE slots.share > 0 AND delivery.tenant_id = walk.tenant_id AND delivery.status = 'pending'
        AND delivery.next_attempt_at <= $4::timestamptz
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
      LIMIT $3::int) candidate) picked
  WHERE cardinality(picked.ids) > 0
  LIMIT $5::int),
due AS (
  -- by primary key (an IN list here can become a hash join over every due row)
  SELECT delivery.id FROM webhook_deliveries delivery
  WHERE delivery.id = ANY (ARRAY(
          SELECT chosen.id
          FROM served CROSS JOIN LATERAL unnest(served.ids) WITH ORDINALITY AS chosen(id, turn)
          ORDER BY chosen.turn, served.wrapped, served.tenant_id LIMIT $5::int))
    AND delivery.status = 'pending' AND delivery.next_attempt_at <= $4::timestamptz
  FOR UPDATE OF delivery SKIP LOCKED)
UPDATE webhook_deliveries delivery
SET attempts = delivery.attempts + 1, last_attempt_at = $4::timestamptz, next_attempt_at = $6::timestamptz,
    leased_until = $6::timestamptz
FROM due, webhook_events event, webhook_endpoints endpoint
WHERE delivery.id = due.id AND event.id = delivery.event_id AND endpoint.id = delivery.endpoint_id
RETURNING delivery.id, delivery.attempts, delivery.endpoint_id AS "endpointId", delivery.tenant_id AS "tenantId",
          event.id AS "eventId", event.body, event.created_at AS "eventCreatedAt", endpoint.url, endpoint.secret,
          endpoint.previous_secret AS "previousSecret",
          endpoint.previous_secret_expires_at AS "previousSecretExpiresAt",
          endpoint.failing_since AS "failingSince", delivery.leased_until AS "leasedUntil";
-- plan:
--   Update on webhook_deliveries delivery
--     [CTE after_cursor] Recursive Union
--       Limit
--         Index Only Scan using webhook_deliveries_pending_by_tenant_idx on webhook_deliveries
--       WorkTable Scan on after_cursor previous
--         [SubPlan 1] Limit
--           Index Only Scan using webhook_deliveries_pending_by_tenant_idx on webhook_deliveries later
--     [CTE up_to_cursor] Recursive Union
--       Limit
--         Index Only Scan using webhook_deliveries_pending_by_tenant_idx on webhook_deliveries webhook_deliveries_1
--       WorkTable Scan on up_to_cursor previous_1
--     [CTE due] LockRows
--       [InitPlan 9 (returns $20)] Limit
--         Sort
--           Nested Loop
--             Limit
--               Nested Loop
--                 Nested Loop
--                   Append
--                     CTE Scan on after_cursor
--                     CTE Scan on up_to_cursor
--                   Aggregate
--                     Index Only Scan using webhook_deliveries_leased_idx on webhook_deliveries leased
--                 Aggregate
--                   Limit
--                     Result
--                       Nested Loop
--                         Index Scan using webhook_deliveries_pending_by_tenant_idx on webhook_deliveries delivery_1
--                           [SubPlan 7] Index Scan using webhook_deliveries_endpoint_id_ordering_key_event_id_idx on webhook_deliveries earlier
--                           [SubPlan 8] Index Scan using webhook_events_unfanned_idx on webhook_events unfanned
--                         Subquery Scan on endpoint_1
--                           Index Scan using webhook_endpoints_pkey on webhook_endpoints endpoint_2
--                           [SubPlan 5] Index Scan using webhook_events_pkey on webhook_events test
--             Function Scan on unnest chosen
--       Index Scan using webhook_deliveries_pkey on webhook_deliveries delivery_2
--     Nested Loop
--       Nested Loop
--         Nested Loop
--           CTE Scan on due
--           Index Scan using webhook_deliveries_pkey on webhook_deliveries delivery
--         Index Scan using webhook_events_pkey on webhook_events event
--       Index Scan using webhook_endpoints_pkey on webhook_endpoints endpoint

WITH batch AS (
  SELECT id, tenant_id, type, ordering_key, endpoint_id FROM webhook_events
  WHERE fanned_out_at IS NULL ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED),
fanned AS (
  INSERT INTO webhook_deliveries (id, endpoint_id, tenant_id, event_id, ordering_key, next_attempt_at,
                                  created_at)
  SELECT (substr(event.id::text, 1, 15) || substr(pair.hash, 1, 3) || '-8' || substr(pair.hash, 4, 3) || '-'
          || substr(pair.hash, 7, 12))::uuid,
         endpoint.id, event.tenant_id, event.id, event.ordering_key, $2::timestamptz, $2::timestamptz
  FROM batch event JOIN webhook_endpoints endpoint ON endpoint.tenant_id = event.tenant_id
  CROSS JOIN LATERAL (SELECT md5(event.id::text || endpoint.id::text) AS hash) pair
  WHERE CASE WHEN event.endpoint_id IS NOT NULL THEN endpoint.id = event.endpoint_id
             ELSE endpoint.enabled AND (coalesce(cardinality(endpoint.event_types), 0) = 0
                                        OR event.type = ANY (endpoint.event_types)) END
  ON CONFLICT (endpoint_id, event_id) DO NOTHING
  RETURNING event_id),
marked AS (
  UPDATE webhook_events SET fanned_out_at = $2::timestamptz WHERE id IN (SELECT id FROM batch))
SELECT (SELECT count(*) FROM batch)::int AS events, (SELECT count(*) FROM fanned)::int AS deliveries;
-- plan:
--   Result
--     [CTE batch] Limit
--       LockRows
--         Index Scan using webhook_events_unfanned_idx on webhook_events
--     [CTE fanned] Insert on webhook_deliveries
--       Nested Loop
--         CTE Scan on batch event
--         Index Scan using webhook_endpoints_tenant_id_id_idx on webhook_endpoints endpoint
--     [CTE marked] Update on webhook_events webhook_events_1
--       Nested Loop
--         HashAggregate
--           CTE Scan on batch
--         Index Scan using webhook_events_pkey on webhook_events webhook_events_1
--     [InitPlan 4 (returns $10)] Aggregate
--       CTE Scan on batch batch_1
--     [InitPlan 5 (returns $11)] Aggregate
--       CTE Scan on fanned
