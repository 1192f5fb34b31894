-- Written by packages/server/test/integration/statement-plans.test.ts: the statements each operation sends
-- (in text order), with the shape of their plans on PostgreSQL. UPDATE_STATEMENT_PLANS=1 rewrites the file
-- (docs/development.md).

-- operation: createRequest

WITH
work AS (
  SELECT w.id FROM works w
  WHERE w.id = $1::uuid AND w.tenant_id = $2::uuid AND w.discarded_at IS NULL
    AND EXISTS (SELECT 1 FROM memberships WHERE tenant_id = $2::uuid AND user_id = $3::uuid
   AND role IN ('member', 'admin', 'owner')) AND TRUE
  FOR SHARE),
allowance AS (SELECT take_mail_allowance($4::uuid, $5::uuid, $6::text, $7::date, $8::uuid, $9::int, $10::int, $11::int, $12::int, $13::boolean) AS stopped FROM work),
created AS (
  INSERT INTO requests (id, work_id, title, message, recipient_email, recipient_first_name,
                        recipient_last_name, due_at, owner_id, created_at, updated_at, email_status,
                        email_failure, emails_stopped, tenant_id, search)
  SELECT $14::uuid, work.id, $15, $16, $17, $18,
         $19, $20::timestamptz, $3::uuid, $21::timestamptz, $21::timestamptz,
         CASE WHEN a.stopped THEN 'dropped' ELSE 'queued' END::mail_status,
         CASE WHEN a.stopped THEN $22 END, a.stopped, $2::uuid, $23
  FROM work, allowance a
  RETURNING id, emails_stopped),
-- Counted here, pending in the work's count slot of this session (see counts.ts), only when inserted.
counted AS (
  INSERT INTO work_counts AS c (work_id, slot, pending)
  SELECT $1::uuid, counter_slot(), 1 FROM created
  ON CONFLICT (work_id, slot) DO UPDATE SET pending = c.pending + 1),
mailed AS (
  INSERT INTO mail_outbox (id, kind, tenant_id, request_id, invitation_id, next_attempt_at, created_at)
  SELECT $24::uuid, 'request', $2::uuid, id, NULL, $21::timestamptz, $21::timestamptz FROM created
  WHERE NOT emails_stopped)
INSERT INTO webhook_events (id, tenant_id, type, ordering_key, endpoint_id, body, created_at)
SELECT $25::uuid, $26::uuid, $27::text, $28::uuid, $29::uuid, CASE WHEN created.emails_stopped THEN $30 ELSE $31::text END, $32::timestamptz
FROM created RETURNING (SELECT emails_stopped FROM created) AS stopped;
-- plan:
--   Insert on webhook_events
--     [CTE work] LockRows
--       [InitPlan 1 (returns $0)] Index Scan using memberships_user_id_tenant_id_idx on memberships
--       Result
--         Index Scan using works_kept_tenant_id_id_idx on works w
--     [CTE allowance] CTE Scan on work
--     [CTE created] Insert on requests
--       Nested Loop
--         CTE Scan on work work_1
--         CTE Scan on allowance a
--     [CTE counted] Insert on work_counts c
--       CTE Scan on created created_1
--     [CTE mailed] Insert on mail_outbox
--       CTE Scan on created created_2
--     [InitPlan 7 (returns $10)] CTE Scan on created created_3
--     CTE Scan on created
-- generic plan (sent prepared):
--   Insert on webhook_events
--     [CTE work] LockRows
--       [InitPlan 1 (returns $0)] Index Scan using memberships_tenant_id_id_idx on memberships
--       Result
--         Index Scan using works_kept_tenant_id_id_idx on works w
--     [CTE allowance] CTE Scan on work
--     [CTE created] Insert on requests
--       Nested Loop
--         CTE Scan on work work_1
--         CTE Scan on allowance a
--     [CTE counted] Insert on work_counts c
--       CTE Scan on created created_1
--     [CTE mailed] Insert on mail_outbox
--       CTE Scan on created created_2
--     [InitPlan 7 (returns $10)] CTE Scan on created created_3
--     CTE Scan on created

-- operation: createRequest (keyed)

WITH held_key AS (
  SELECT 1 FROM idempotency_keys
  WHERE scope = $1 AND key = $2 AND locked_at = $3::timestamptz
    AND status IS NULL AND result IS NULL
  FOR UPDATE),
work AS (
  SELECT w.id FROM works w
  WHERE w.id = $4::uuid AND w.tenant_id = $5::uuid AND w.discarded_at IS NULL
    AND EXISTS (SELECT 1 FROM memberships WHERE tenant_id = $5::uuid AND user_id = $6::uuid
   AND role IN ('member', 'admin', 'owner')) AND EXISTS (SELECT FROM held_key)
  FOR SHARE),
allowance AS (SELECT take_mail_allowance($7::uuid, $8::uuid, $9::text, $10::date, $11::uuid, $12::int, $13::int, $14::int, $15::int, $16::boolean) AS stopped FROM work),
created AS (
  INSERT INTO requests (id, work_id, title, message, recipient_email, recipient_first_name,
                        recipient_last_name, due_at, owner_id, created_at, updated_at, email_status,
                        email_failure, emails_stopped, tenant_id, search)
  SELECT $17::uuid, work.id, $18, $19, $20, $21,
         $22, $23::timestamptz, $6::uuid, $24::timestamptz, $24::timestamptz,
         CASE WHEN a.stopped THEN 'dropped' ELSE 'queued' END::mail_status,
         CASE WHEN a.stopped THEN $25 END, a.stopped, $5::uuid, $26
  FROM work, allowance a
  RETURNING id, emails_stopped),
recorded_key AS (
  UPDATE idempotency_keys k
  SET result = CASE WHEN emails_stopped THEN $27 ELSE $28 END
  FROM created
  WHERE k.scope = $1 AND k.key = $2 AND k.locked_at = $3::timestamptz
    AND k.status IS NULL AND k.result IS NULL),
-- Counted here, pending in the work's count slot of this session (see counts.ts), only when inserted.
counted AS (
  INSERT INTO work_counts AS c (work_id, slot, pending)
  SELECT $4::uuid, counter_slot(), 1 FROM created
  ON CONFLICT (work_id, slot) DO UPDATE SET pending = c.pending + 1),
mailed AS (
  INSERT INTO mail_outbox (id, kind, tenant_id, request_id, invitation_id, next_attempt_at, created_at)
  SELECT $29::uuid, 'request', $5::uuid, id, NULL, $24::timestamptz, $24::timestamptz FROM created
  WHERE NOT emails_stopped)
INSERT INTO webhook_events (id, tenant_id, type, ordering_key, endpoint_id, body, created_at)
SELECT $30::uuid, $31::uuid, $32::text, $33::uuid, $34::uuid, CASE WHEN created.emails_stopped THEN $35 ELSE $36::text END, $37::timestamptz
FROM created RETURNING (SELECT emails_stopped FROM created) AS stopped;
-- plan:
--   Insert on webhook_events
--     [CTE held_key] LockRows
--       Index Scan using idempotency_keys_pkey on idempotency_keys
--     [CTE work] LockRows
--       [InitPlan 2 (returns $2)] Index Scan using memberships_user_id_tenant_id_idx on memberships
--       [InitPlan 3 (returns $3)] CTE Scan on held_key
--       Result
--         Index Scan using works_kept_tenant_id_id_idx on works w
--     [CTE allowance] CTE Scan on work
--     [CTE created] Insert on requests
--       Nested Loop
--         CTE Scan on work work_1
--         CTE Scan on allowance a
--     [CTE recorded_key] Update on idempotency_keys k
--       Nested Loop
--         Index Scan using idempotency_keys_pkey on idempotency_keys k
--         CTE Scan on created created_1
--     [CTE counted] Insert on work_counts c
--       CTE Scan on created created_2
--     [CTE mailed] Insert on mail_outbox
--       CTE Scan on created created_3
--     [InitPlan 10 (returns $15)] CTE Scan on created created_4
--     CTE Scan on created
-- generic plan (sent prepared):
--   Insert on webhook_events
--     [CTE held_key] LockRows
--       Index Scan using idempotency_keys_pkey on idempotency_keys
--     [CTE work] LockRows
--       [InitPlan 2 (returns $2)] Index Scan using memberships_tenant_id_id_idx on memberships
--       [InitPlan 3 (returns $3)] CTE Scan on held_key
--       Result
--         Index Scan using works_kept_tenant_id_id_idx on works w
--     [CTE allowance] CTE Scan on work
--     [CTE created] Insert on requests
--       Nested Loop
--         CTE Scan on work work_1
--         CTE Scan on allowance a
--     [CTE recorded_key] Update on idempotency_keys k
--       Nested Loop
--         Index Scan using idempotency_keys_pkey on idempotency_keys k
--         CTE Scan on created created_1
--     [CTE counted] Insert on work_counts c
--       CTE Scan on created created_2
--     [CTE mailed] Insert on mail_outbox
--       CTE Scan on created created_3
--     [InitPlan 10 (returns $15)] CTE Scan on created created_4
--     CTE Scan on created

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
