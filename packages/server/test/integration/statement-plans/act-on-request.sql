-- Written by packages/server/test/integration/statement-plans.test.ts: the statements each operation sends
-- (in text order), with the shape of their plans on PostgreSQL. UPDATE_STATEMENT_PLANS=1 rewrites the file
-- (docs/development.md).

-- operation: actOnRequest (confirm)

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

WITH changed AS (
  UPDATE requests r SET status = $1::request_status, updated_at = $2::timestamptz, confirmed_at = $2::timestamptz, answer = $3::text,
                        confirmed_through_dev_mailbox = r.confirmed_through_dev_mailbox OR $4
  WHERE r.id = $5::uuid AND r.work_id = $6::uuid AND r.status = $7::request_status
    AND r.updated_at = $8::timestamptz
    AND EXISTS (SELECT 1 FROM works w WHERE w.id = r.work_id AND w.discarded_at IS NULL)
  RETURNING r.id),
transition AS (
  INSERT INTO request_events (id, request_id, action, from_status, to_status, actor_id, actor_type,
                              through_dev_mailbox, note, created_at)
  SELECT $9::uuid, id, $10::request_action, $7::request_status, $1::request_status, $11::uuid,
         $12::actor_type, $4, $3::text, $2::timestamptz
  FROM changed)
INSERT INTO webhook_events (id, tenant_id, type, ordering_key, endpoint_id, body, created_at) SELECT $13::uuid, $14::uuid, $15::text, $16::uuid, $17::uuid, $18::text, $19::timestamptz FROM changed RETURNING id;
-- plan:
--   Insert on webhook_events
--     [CTE changed] Update on requests r
--       Nested Loop Semi Join
--         Index Scan using requests_work_id_id_idx on requests r
--         Index Scan using works_pkey on works w
--     [CTE transition] Insert on request_events
--       CTE Scan on changed changed_1
--     CTE Scan on changed
-- generic plan (sent prepared):
--   Insert on webhook_events
--     [CTE changed] Update on requests r
--       Nested Loop Semi Join
--         Index Scan using requests_work_id_id_idx on requests r
--         Index Scan using works_pkey on works w
--     [CTE transition] Insert on request_events
--       CTE Scan on changed changed_1
--     CTE Scan on changed
