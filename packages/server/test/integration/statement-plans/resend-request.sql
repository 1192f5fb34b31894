-- Written by packages/server/test/integration/statement-plans.test.ts: the statements each operation sends
-- (in text order), with the shape of their plans on PostgreSQL. UPDATE_STATEMENT_PLANS=1 rewrites the file
-- (docs/development.md).

-- operation: resendRequest

SELECT m.role::text AS "callerRole", r.id, r.work_id AS "workId", r.status::text AS status, r.title, r.message,
r.recipient_email AS "recipientEmail", r.recipient_first_name AS "recipientFirstName",
r.recipient_last_name AS "recipientLastName", r.answer, r.validation::text AS validation,
r.cancel_reason AS "cancelReason", r.due_at AS "dueAt", r.owner_id AS "ownerId", r.created_at AS "createdAt",
r.updated_at AS "updatedAt", r.confirmed_at AS "confirmedAt", r.validated_at AS "validatedAt",
r.cancelled_at AS "cancelledAt", r.email_status::text AS "emailStatus", r.email_sent_at AS "emailSentAt",
r.email_failure AS "emailFailure", r.reminded_at AS "remindedAt", r.link_generation AS "linkGeneration",
r.resend_count AS "resendCount", r.last_resent_at AS "lastResentAt", r.emails_stopped AS "emailsStopped",
r.confirmed_through_dev_mailbox AS "confirmedThroughDevMailbox", r.tenant_id AS "tenantId", r.search,
o.email AS "ownerEmail", o.first_name AS "ownerFirstName", o.last_name AS "ownerLastName", w.discarded_at AS "workDiscardedAt"
   FROM (SELECT) AS one
   LEFT JOIN memberships m ON m.tenant_id = $1::uuid AND m.user_id = $2::uuid
   LEFT JOIN (requests r JOIN works w ON w.id = r.work_id JOIN users o ON o.id = r.owner_id)
     ON r.id = $3::uuid AND r.work_id = $4::uuid AND w.tenant_id = $1::uuid;
-- plan:
--   Nested Loop Left Join
--     Nested Loop Left Join
--       Result
--       Bitmap Heap Scan on memberships m
--         Bitmap Index Scan on memberships_tenant_id_user_id_key
--     Materialize
--       Nested Loop
--         Merge Join
--           Index Scan using users_pkey on users o
--           Sort
--             Index Scan using requests_work_id_id_idx on requests r
--         Index Scan using works_tenant_id_id_idx on works w
-- generic plan (sent prepared):
--   Nested Loop Left Join
--     Nested Loop Left Join
--       Result
--       Index Scan using memberships_tenant_id_id_idx on memberships m
--     Nested Loop
--       Merge Join
--         Index Scan using users_pkey on users o
--         Sort
--           Index Scan using requests_work_id_id_idx on requests r
--       Index Scan using works_tenant_id_id_idx on works w

WITH target AS (
  SELECT r.id, r.recipient_email FROM requests r
  WHERE r.id = $1::uuid AND r.work_id = $2::uuid AND r.status = 'pending'
    AND r.resend_count < $3
    AND (r.last_resent_at IS NULL OR r.last_resent_at <= $4::timestamptz - $5::interval)
    AND EXISTS (SELECT 1 FROM works w WHERE w.id = r.work_id AND w.discarded_at IS NULL)
  FOR UPDATE),
allowance AS (SELECT id, take_mail_allowance($6::uuid, $7::uuid, $8::text, $9::date, $10::uuid, $11::int, $12::int, $13::int, $14::int, $15::boolean) AS stopped FROM target),
changed AS (
  UPDATE requests r SET link_generation = r.link_generation + 1, email_status = 'queued', email_failure = NULL,
                        resend_count = r.resend_count + 1, last_resent_at = $4::timestamptz,
                        emails_stopped = false
  FROM allowance a WHERE r.id = a.id AND NOT a.stopped
  RETURNING r.id),
marked AS (
  UPDATE requests r SET emails_stopped = true FROM allowance a WHERE r.id = a.id AND a.stopped),
dropped AS (
  UPDATE mail_outbox SET status = 'dropped', next_attempt_at = NULL
  WHERE request_id IN (SELECT id FROM changed) AND status = 'queued'),
queued AS (
  INSERT INTO mail_outbox (id, kind, tenant_id, request_id, invitation_id, next_attempt_at, created_at)
  SELECT $16::uuid, 'request', $17::uuid, id, NULL, $4::timestamptz, $4::timestamptz
  FROM changed RETURNING id)
SELECT a.stopped, (SELECT count(*) FROM queued)::int AS queued FROM allowance a;
-- plan:
--   CTE Scan on allowance a
--     [CTE target] LockRows
--       Nested Loop Semi Join
--         Index Scan using requests_work_id_id_idx on requests r
--         Index Scan using works_pkey on works w
--     [CTE allowance] CTE Scan on target
--     [CTE changed] Update on requests r_1
--       Nested Loop
--         CTE Scan on allowance a_1
--         Index Scan using requests_pkey on requests r_1
--     [CTE marked] Update on requests r_2
--       Nested Loop
--         CTE Scan on allowance a_2
--         Index Scan using requests_pkey on requests r_2
--     [CTE dropped] Update on mail_outbox
--       Nested Loop Semi Join
--         Seq Scan on mail_outbox
--         CTE Scan on changed
--     [CTE queued] Insert on mail_outbox mail_outbox_1
--       CTE Scan on changed changed_1
--     [InitPlan 7 (returns $13)] Aggregate
--       CTE Scan on queued
-- generic plan (sent prepared):
--   CTE Scan on allowance a
--     [CTE target] LockRows
--       Nested Loop Semi Join
--         Index Scan using requests_work_id_id_idx on requests r
--         Index Scan using works_pkey on works w
--     [CTE allowance] CTE Scan on target
--     [CTE changed] Update on requests r_1
--       Nested Loop
--         CTE Scan on allowance a_1
--         Index Scan using requests_pkey on requests r_1
--     [CTE marked] Update on requests r_2
--       Nested Loop
--         CTE Scan on allowance a_2
--         Index Scan using requests_pkey on requests r_2
--     [CTE dropped] Update on mail_outbox
--       Nested Loop Semi Join
--         Seq Scan on mail_outbox
--         CTE Scan on changed
--     [CTE queued] Insert on mail_outbox mail_outbox_1
--       CTE Scan on changed changed_1
--     [InitPlan 7 (returns $13)] Aggregate
--       CTE Scan on queued
