-- Written by packages/server/test/integration/statement-plans.test.ts: the statements each operation sends
-- (in text order), with the shape of their plans on PostgreSQL. UPDATE_STATEMENT_PLANS=1 rewrites the file
-- (docs/development.md).

-- operation: createRequestBatch

WITH work AS (
  SELECT w.id FROM works w
  WHERE w.id = $1::uuid AND w.tenant_id = $2::uuid AND w.discarded_at IS NULL AND EXISTS (SELECT 1 FROM memberships WHERE tenant_id = $2::uuid AND user_id = $3::uuid
        AND role IN ('member', 'admin', 'owner'))
  FOR SHARE),
items AS MATERIALIZED (
  SELECT * FROM json_to_recordset($4::json) AS i(ord int, id uuid, title text, message text, email text, first_name text, last_name text,
due_at timestamptz, search text, recipient_id uuid, mail_id uuid, event_id uuid, body text, stopped_body text)),
-- Every email's place under the daily caps at once (migration request_batch_mail_allowances), only when the work
-- is there for this caller (nothing counted otherwise): per item, whether its address stopped the tenant's emails.
allowance AS MATERIALIZED (
  SELECT take_mail_allowances($2::uuid, $3::uuid, array_agg(i.email ORDER BY i.ord), $5::date,
                              array_agg(i.recipient_id ORDER BY i.ord), $6::int,
                              $7::int, $8::int,
                              $9::int) AS stopped
  FROM items i
  WHERE EXISTS (SELECT FROM work)
  HAVING count(*) > 0),
created AS (
  INSERT INTO requests (id, work_id, title, message, recipient_email, recipient_first_name, recipient_last_name,
                        due_at, owner_id, created_at, updated_at, email_status, email_failure, emails_stopped,
                        tenant_id, search)
  SELECT i.id, $1::uuid, i.title, i.message, i.email, i.first_name, i.last_name, i.due_at, $3::uuid,
         $10::timestamptz, $10::timestamptz,
         CASE WHEN a.stopped[i.ord + 1] THEN 'dropped' ELSE 'queued' END::mail_status,
         CASE WHEN a.stopped[i.ord + 1] THEN $11 END, a.stopped[i.ord + 1], $2::uuid,
         i.search
  FROM items i, allowance a
  ORDER BY i.ord
  RETURNING id, emails_stopped),
counted AS (
  INSERT INTO work_counts AS c (work_id, slot, pending)
  SELECT $1::uuid, counter_slot(), count(*) FROM created HAVING count(*) > 0
  ON CONFLICT (work_id, slot) DO UPDATE SET pending = c.pending + EXCLUDED.pending),
mailed AS (
  INSERT INTO mail_outbox (id, kind, tenant_id, request_id, invitation_id, next_attempt_at, created_at)
  SELECT i.mail_id, 'request', $2::uuid, c.id, NULL, $10::timestamptz, $10::timestamptz
  FROM created c JOIN items i ON i.id = c.id
  WHERE NOT c.emails_stopped),
evented AS (
  INSERT INTO webhook_events (id, tenant_id, type, ordering_key, endpoint_id, body, created_at)
  SELECT i.event_id, $2::uuid, 'request.created', i.id, NULL,
         CASE WHEN c.emails_stopped THEN i.stopped_body ELSE i.body END, $10::timestamptz
  FROM created c JOIN items i ON i.id = c.id
  ORDER BY i.ord)
SELECT c.id, c.emails_stopped AS stopped FROM created c;
-- plan:
--   CTE Scan on created c
--     [CTE work] LockRows
--       [InitPlan 1 (returns $0)] Index Scan using memberships_user_id_tenant_id_idx on memberships
--       Result
--         Index Scan using works_kept_tenant_id_id_idx on works w
--     [CTE items] Function Scan on json_to_recordset i
--     [CTE allowance] Aggregate
--       [InitPlan 4 (returns $4)] CTE Scan on work
--       Result
--         CTE Scan on items i_1
--     [CTE created] Insert on requests
--       Subquery Scan on *SELECT*
--         Sort
--           Nested Loop
--             CTE Scan on allowance a
--             CTE Scan on items i_2
--     [CTE counted] Insert on work_counts c_1
--       Subquery Scan on *SELECT*_1
--         Aggregate
--           CTE Scan on created
--     [CTE mailed] Insert on mail_outbox
--       Hash Join
--         CTE Scan on items i_3
--         Hash
--           CTE Scan on created c_2
--     [CTE evented] Insert on webhook_events
--       Subquery Scan on *SELECT*_2
--         Sort
--           Hash Join
--             CTE Scan on created c_3
--             Hash
--               CTE Scan on items i_4

-- operation: createRequestBatch (keyed)

WITH taken AS (
  INSERT INTO idempotency_keys (scope, key, request, body_hash, locked_at, created_at, expires_at)
  VALUES ($1, $2, $3, $4, $5::timestamptz, $5::timestamptz, $6::timestamptz)
  ON CONFLICT (scope, key) DO NOTHING RETURNING 1)
SELECT EXISTS (SELECT FROM taken) AS taken, k.request, k.body_hash AS "bodyHash", k.status,
       k.content_type AS "contentType", k.location, k.body, k.result, k.locked_at AS "lockedAt",
       k.expires_at AS "expiresAt"
FROM (SELECT 1) AS one
LEFT JOIN idempotency_keys k ON NOT EXISTS (SELECT FROM taken) AND k.scope = $1 AND k.key = $2;
-- plan:
--   Nested Loop Left Join
--     [CTE taken] Insert on idempotency_keys
--       Result
--     [InitPlan 2 (returns $2)] CTE Scan on taken
--     [InitPlan 3 (returns $3)] CTE Scan on taken taken_1
--     Result
--     Index Scan using idempotency_keys_pkey on idempotency_keys k
-- generic plan (sent prepared):
--   Nested Loop Left Join
--     [CTE taken] Insert on idempotency_keys
--       Result
--     [InitPlan 2 (returns $2)] CTE Scan on taken
--     [InitPlan 3 (returns $3)] CTE Scan on taken taken_1
--     Result
--     Index Scan using idempotency_keys_pkey on idempotency_keys k
