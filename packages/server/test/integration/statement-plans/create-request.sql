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
