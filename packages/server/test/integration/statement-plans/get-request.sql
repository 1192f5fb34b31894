-- Written by packages/server/test/integration/statement-plans.test.ts: the statements each operation sends
-- (in text order), with the shape of their plans on PostgreSQL. UPDATE_STATEMENT_PLANS=1 rewrites the file
-- (docs/development.md).

-- operation: getRequest (validated)

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
