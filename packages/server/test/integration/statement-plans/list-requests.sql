-- Written by packages/server/test/integration/statement-plans.test.ts: the statements each operation sends
-- (in text order), with the shape of their plans on PostgreSQL. UPDATE_STATEMENT_PLANS=1 rewrites the file
-- (docs/development.md).

-- operation: listRequests (the big work)

WITH member AS (
     SELECT role::text AS role FROM memberships WHERE tenant_id = $1::uuid AND user_id = $2::uuid),
   parent AS (SELECT EXISTS (SELECT 1 FROM works WHERE id = $3::uuid AND tenant_id = $1::uuid) AS found),
   page AS (
     SELECT r.id, r.work_id AS "workId", r.status::text AS status, r.title, r.message,
r.recipient_email AS "recipientEmail", r.recipient_first_name AS "recipientFirstName",
r.recipient_last_name AS "recipientLastName", r.answer, r.validation::text AS validation,
r.cancel_reason AS "cancelReason", r.due_at AS "dueAt", r.created_at AS "createdAt", r.updated_at AS "updatedAt",
r.confirmed_at AS "confirmedAt", r.validated_at AS "validatedAt", r.cancelled_at AS "cancelledAt",
r.email_status::text AS "emailStatus", r.email_sent_at AS "emailSentAt", r.email_failure AS "emailFailure",
r.emails_stopped AS "emailsStopped", r.confirmed_through_dev_mailbox AS "confirmedThroughDevMailbox",
u.email AS "ownerEmail", u.first_name AS "ownerFirstName", u.last_name AS "ownerLastName" FROM requests r JOIN users u ON u.id = r.owner_id
     WHERE EXISTS (SELECT 1 FROM member) AND (SELECT found FROM parent)
       AND r.work_id = $3::uuid
     ORDER BY r.id DESC LIMIT $4)
   SELECT member.role AS "__role", (SELECT found FROM parent) AS "__parent", (SELECT COALESCE(SUM(pending + confirmed + validated + cancelled), 0) FROM work_counts
           WHERE work_id = $3::uuid) AS "__count", page.*
   FROM (SELECT 1) AS one LEFT JOIN member ON TRUE LEFT JOIN page ON TRUE;
-- plan:
--   Nested Loop Left Join
--     [CTE member] Bitmap Heap Scan on memberships
--       Bitmap Index Scan on memberships_tenant_id_user_id_key
--     [CTE parent] Result
--       [InitPlan 2 (returns $1)] Index Only Scan using works_tenant_id_id_idx on works
--     [InitPlan 4 (returns $3)] CTE Scan on parent
--     [InitPlan 5 (returns $4)] Aggregate
--       Seq Scan on work_counts
--     Nested Loop Left Join
--       Result
--       CTE Scan on member
--     Materialize
--       Limit
--         [InitPlan 6 (returns $5)] CTE Scan on member member_1
--         [InitPlan 7 (returns $6)] CTE Scan on parent parent_1
--         Result
--           Nested Loop
--             Index Scan Backward using requests_pkey on requests r
--             Index Scan using users_pkey on users u

-- operation: listRequests (the big work, pending)

WITH member AS (
     SELECT role::text AS role FROM memberships WHERE tenant_id = $1::uuid AND user_id = $2::uuid),
   parent AS (SELECT EXISTS (SELECT 1 FROM works WHERE id = $3::uuid AND tenant_id = $1::uuid) AS found),
   page AS (
     SELECT r.id, r.work_id AS "workId", r.status::text AS status, r.title, r.message,
r.recipient_email AS "recipientEmail", r.recipient_first_name AS "recipientFirstName",
r.recipient_last_name AS "recipientLastName", r.answer, r.validation::text AS validation,
r.cancel_reason AS "cancelReason", r.due_at AS "dueAt", r.created_at AS "createdAt", r.updated_at AS "updatedAt",
r.confirmed_at AS "confirmedAt", r.validated_at AS "validatedAt", r.cancelled_at AS "cancelledAt",
r.email_status::text AS "emailStatus", r.email_sent_at AS "emailSentAt", r.email_failure AS "emailFailure",
r.emails_stopped AS "emailsStopped", r.confirmed_through_dev_mailbox AS "confirmedThroughDevMailbox",
u.email AS "ownerEmail", u.first_name AS "ownerFirstName", u.last_name AS "ownerLastName" FROM requests r JOIN users u ON u.id = r.owner_id
     WHERE EXISTS (SELECT 1 FROM member) AND (SELECT found FROM parent)
       AND r.work_id = $3::uuid AND r.status = $4::request_status
     ORDER BY r.id DESC LIMIT $5)
   SELECT member.role AS "__role", (SELECT found FROM parent) AS "__parent", (SELECT COALESCE(SUM(pending), 0) FROM work_counts
           WHERE work_id = $3::uuid) AS "__count", page.*
   FROM (SELECT 1) AS one LEFT JOIN member ON TRUE LEFT JOIN page ON TRUE;
-- plan:
--   Nested Loop Left Join
--     [CTE member] Bitmap Heap Scan on memberships
--       Bitmap Index Scan on memberships_tenant_id_user_id_key
--     [CTE parent] Result
--       [InitPlan 2 (returns $1)] Index Only Scan using works_tenant_id_id_idx on works
--     [InitPlan 4 (returns $3)] CTE Scan on parent
--     [InitPlan 5 (returns $4)] Aggregate
--       Seq Scan on work_counts
--     Nested Loop Left Join
--       Result
--       CTE Scan on member
--     Materialize
--       Limit
--         [InitPlan 6 (returns $5)] CTE Scan on member member_1
--         [InitPlan 7 (returns $6)] CTE Scan on parent parent_1
--         Result
--           Nested Loop
--             Index Scan Backward using requests_pkey on requests r
--             Index Scan using users_pkey on users u

-- operation: listRequests (the big work, validated)

WITH member AS (
     SELECT role::text AS role FROM memberships WHERE tenant_id = $1::uuid AND user_id = $2::uuid),
   parent AS (SELECT EXISTS (SELECT 1 FROM works WHERE id = $3::uuid AND tenant_id = $1::uuid) AS found),
   page AS (
     SELECT r.id, r.work_id AS "workId", r.status::text AS status, r.title, r.message,
r.recipient_email AS "recipientEmail", r.recipient_first_name AS "recipientFirstName",
r.recipient_last_name AS "recipientLastName", r.answer, r.validation::text AS validation,
r.cancel_reason AS "cancelReason", r.due_at AS "dueAt", r.created_at AS "createdAt", r.updated_at AS "updatedAt",
r.confirmed_at AS "confirmedAt", r.validated_at AS "validatedAt", r.cancelled_at AS "cancelledAt",
r.email_status::text AS "emailStatus", r.email_sent_at AS "emailSentAt", r.email_failure AS "emailFailure",
r.emails_stopped AS "emailsStopped", r.confirmed_through_dev_mailbox AS "confirmedThroughDevMailbox",
u.email AS "ownerEmail", u.first_name AS "ownerFirstName", u.last_name AS "ownerLastName" FROM requests r JOIN users u ON u.id = r.owner_id
     WHERE EXISTS (SELECT 1 FROM member) AND (SELECT found FROM parent)
       AND r.work_id = $3::uuid AND r.status = $4::request_status
     ORDER BY r.id DESC LIMIT $5)
   SELECT member.role AS "__role", (SELECT found FROM parent) AS "__parent", (SELECT COALESCE(SUM(validated), 0) FROM work_counts
           WHERE work_id = $3::uuid) AS "__count", page.*
   FROM (SELECT 1) AS one LEFT JOIN member ON TRUE LEFT JOIN page ON TRUE;
-- plan:
--   Nested Loop Left Join
--     [CTE member] Bitmap Heap Scan on memberships
--       Bitmap Index Scan on memberships_tenant_id_user_id_key
--     [CTE parent] Result
--       [InitPlan 2 (returns $1)] Index Only Scan using works_tenant_id_id_idx on works
--     [InitPlan 4 (returns $3)] CTE Scan on parent
--     [InitPlan 5 (returns $4)] Aggregate
--       Seq Scan on work_counts
--     Nested Loop Left Join
--       Result
--       CTE Scan on member
--     Materialize
--       Limit
--         [InitPlan 6 (returns $5)] CTE Scan on member member_1
--         [InitPlan 7 (returns $6)] CTE Scan on parent parent_1
--         Result
--           Nested Loop
--             Index Scan Backward using requests_pkey on requests r
--             Index Scan using users_pkey on users u

-- operation: listRequests (the big work, after the 15,000th)

WITH member AS (
     SELECT role::text AS role FROM memberships WHERE tenant_id = $1::uuid AND user_id = $2::uuid),
   parent AS (SELECT EXISTS (SELECT 1 FROM works WHERE id = $3::uuid AND tenant_id = $1::uuid) AS found),
   page AS (
     SELECT r.id, r.work_id AS "workId", r.status::text AS status, r.title, r.message,
r.recipient_email AS "recipientEmail", r.recipient_first_name AS "recipientFirstName",
r.recipient_last_name AS "recipientLastName", r.answer, r.validation::text AS validation,
r.cancel_reason AS "cancelReason", r.due_at AS "dueAt", r.created_at AS "createdAt", r.updated_at AS "updatedAt",
r.confirmed_at AS "confirmedAt", r.validated_at AS "validatedAt", r.cancelled_at AS "cancelledAt",
r.email_status::text AS "emailStatus", r.email_sent_at AS "emailSentAt", r.email_failure AS "emailFailure",
r.emails_stopped AS "emailsStopped", r.confirmed_through_dev_mailbox AS "confirmedThroughDevMailbox",
u.email AS "ownerEmail", u.first_name AS "ownerFirstName", u.last_name AS "ownerLastName" FROM requests r JOIN users u ON u.id = r.owner_id
     WHERE EXISTS (SELECT 1 FROM member) AND (SELECT found FROM parent)
       AND r.work_id = $3::uuid AND r.id < $4::uuid
     ORDER BY r.id DESC LIMIT $5)
   SELECT member.role AS "__role", (SELECT found FROM parent) AS "__parent", (SELECT COALESCE(SUM(pending + confirmed + validated + cancelled), 0) FROM work_counts
           WHERE work_id = $3::uuid) AS "__count", page.*
   FROM (SELECT 1) AS one LEFT JOIN member ON TRUE LEFT JOIN page ON TRUE;
-- plan:
--   Nested Loop Left Join
--     [CTE member] Bitmap Heap Scan on memberships
--       Bitmap Index Scan on memberships_tenant_id_user_id_key
--     [CTE parent] Result
--       [InitPlan 2 (returns $1)] Index Only Scan using works_tenant_id_id_idx on works
--     [InitPlan 4 (returns $3)] CTE Scan on parent
--     [InitPlan 5 (returns $4)] Aggregate
--       Seq Scan on work_counts
--     Nested Loop Left Join
--       Result
--       CTE Scan on member
--     Materialize
--       Limit
--         [InitPlan 6 (returns $5)] CTE Scan on member member_1
--         [InitPlan 7 (returns $6)] CTE Scan on parent parent_1
--         Result
--           Nested Loop
--             Index Scan Backward using requests_pkey on requests r
--             Index Scan using users_pkey on users u

-- operation: listRequests (the big work, pending, after the 10,000th)

WITH member AS (
     SELECT role::text AS role FROM memberships WHERE tenant_id = $1::uuid AND user_id = $2::uuid),
   parent AS (SELECT EXISTS (SELECT 1 FROM works WHERE id = $3::uuid AND tenant_id = $1::uuid) AS found),
   page AS (
     SELECT r.id, r.work_id AS "workId", r.status::text AS status, r.title, r.message,
r.recipient_email AS "recipientEmail", r.recipient_first_name AS "recipientFirstName",
r.recipient_last_name AS "recipientLastName", r.answer, r.validation::text AS validation,
r.cancel_reason AS "cancelReason", r.due_at AS "dueAt", r.created_at AS "createdAt", r.updated_at AS "updatedAt",
r.confirmed_at AS "confirmedAt", r.validated_at AS "validatedAt", r.cancelled_at AS "cancelledAt",
r.email_status::text AS "emailStatus", r.email_sent_at AS "emailSentAt", r.email_failure AS "emailFailure",
r.emails_stopped AS "emailsStopped", r.confirmed_through_dev_mailbox AS "confirmedThroughDevMailbox",
u.email AS "ownerEmail", u.first_name AS "ownerFirstName", u.last_name AS "ownerLastName" FROM requests r JOIN users u ON u.id = r.owner_id
     WHERE EXISTS (SELECT 1 FROM member) AND (SELECT found FROM parent)
       AND r.work_id = $3::uuid AND r.status = $4::request_status AND r.id < $5::uuid
     ORDER BY r.id DESC LIMIT $6)
   SELECT member.role AS "__role", (SELECT found FROM parent) AS "__parent", (SELECT COALESCE(SUM(pending), 0) FROM work_counts
           WHERE work_id = $3::uuid) AS "__count", page.*
   FROM (SELECT 1) AS one LEFT JOIN member ON TRUE LEFT JOIN page ON TRUE;
-- plan:
--   Nested Loop Left Join
--     [CTE member] Bitmap Heap Scan on memberships
--       Bitmap Index Scan on memberships_tenant_id_user_id_key
--     [CTE parent] Result
--       [InitPlan 2 (returns $1)] Index Only Scan using works_tenant_id_id_idx on works
--     [InitPlan 4 (returns $3)] CTE Scan on parent
--     [InitPlan 5 (returns $4)] Aggregate
--       Seq Scan on work_counts
--     Nested Loop Left Join
--       Result
--       CTE Scan on member
--     Materialize
--       Limit
--         [InitPlan 6 (returns $5)] CTE Scan on member member_1
--         [InitPlan 7 (returns $6)] CTE Scan on parent parent_1
--         Result
--           Nested Loop
--             Index Scan Backward using requests_pkey on requests r
--             Index Scan using users_pkey on users u

-- operation: listRequests (a work with none)

WITH member AS (
     SELECT role::text AS role FROM memberships WHERE tenant_id = $1::uuid AND user_id = $2::uuid),
   parent AS (SELECT EXISTS (SELECT 1 FROM works WHERE id = $3::uuid AND tenant_id = $1::uuid) AS found),
   page AS (
     SELECT r.id, r.work_id AS "workId", r.status::text AS status, r.title, r.message,
r.recipient_email AS "recipientEmail", r.recipient_first_name AS "recipientFirstName",
r.recipient_last_name AS "recipientLastName", r.answer, r.validation::text AS validation,
r.cancel_reason AS "cancelReason", r.due_at AS "dueAt", r.created_at AS "createdAt", r.updated_at AS "updatedAt",
r.confirmed_at AS "confirmedAt", r.validated_at AS "validatedAt", r.cancelled_at AS "cancelledAt",
r.email_status::text AS "emailStatus", r.email_sent_at AS "emailSentAt", r.email_failure AS "emailFailure",
r.emails_stopped AS "emailsStopped", r.confirmed_through_dev_mailbox AS "confirmedThroughDevMailbox",
u.email AS "ownerEmail", u.first_name AS "ownerFirstName", u.last_name AS "ownerLastName" FROM requests r JOIN users u ON u.id = r.owner_id
     WHERE EXISTS (SELECT 1 FROM member) AND (SELECT found FROM parent)
       AND r.work_id = $3::uuid
     ORDER BY r.id DESC LIMIT $4)
   SELECT member.role AS "__role", (SELECT found FROM parent) AS "__parent", (SELECT COALESCE(SUM(pending + confirmed + validated + cancelled), 0) FROM work_counts
           WHERE work_id = $3::uuid) AS "__count", page.*
   FROM (SELECT 1) AS one LEFT JOIN member ON TRUE LEFT JOIN page ON TRUE;
-- plan:
--   Nested Loop Left Join
--     [CTE member] Bitmap Heap Scan on memberships
--       Bitmap Index Scan on memberships_tenant_id_user_id_key
--     [CTE parent] Result
--       [InitPlan 2 (returns $1)] Index Only Scan using works_tenant_id_id_idx on works
--     [InitPlan 4 (returns $3)] CTE Scan on parent
--     [InitPlan 5 (returns $4)] Aggregate
--       Seq Scan on work_counts
--     Nested Loop Left Join
--       Result
--       CTE Scan on member
--     Materialize
--       Limit
--         [InitPlan 6 (returns $5)] CTE Scan on member member_1
--         [InitPlan 7 (returns $6)] CTE Scan on parent parent_1
--         Sort
--           Result
--             Merge Join
--               Index Scan using users_pkey on users u
--               Sort
--                 Index Scan Backward using requests_work_id_id_idx on requests r

-- operation: listRequests (a work with none, cancelled)

WITH member AS (
     SELECT role::text AS role FROM memberships WHERE tenant_id = $1::uuid AND user_id = $2::uuid),
   parent AS (SELECT EXISTS (SELECT 1 FROM works WHERE id = $3::uuid AND tenant_id = $1::uuid) AS found),
   page AS (
     SELECT r.id, r.work_id AS "workId", r.status::text AS status, r.title, r.message,
r.recipient_email AS "recipientEmail", r.recipient_first_name AS "recipientFirstName",
r.recipient_last_name AS "recipientLastName", r.answer, r.validation::text AS validation,
r.cancel_reason AS "cancelReason", r.due_at AS "dueAt", r.created_at AS "createdAt", r.updated_at AS "updatedAt",
r.confirmed_at AS "confirmedAt", r.validated_at AS "validatedAt", r.cancelled_at AS "cancelledAt",
r.email_status::text AS "emailStatus", r.email_sent_at AS "emailSentAt", r.email_failure AS "emailFailure",
r.emails_stopped AS "emailsStopped", r.confirmed_through_dev_mailbox AS "confirmedThroughDevMailbox",
u.email AS "ownerEmail", u.first_name AS "ownerFirstName", u.last_name AS "ownerLastName" FROM requests r JOIN users u ON u.id = r.owner_id
     WHERE EXISTS (SELECT 1 FROM member) AND (SELECT found FROM parent)
       AND r.work_id = $3::uuid AND r.status = $4::request_status
     ORDER BY r.id DESC LIMIT $5)
   SELECT member.role AS "__role", (SELECT found FROM parent) AS "__parent", (SELECT COALESCE(SUM(cancelled), 0) FROM work_counts
           WHERE work_id = $3::uuid) AS "__count", page.*
   FROM (SELECT 1) AS one LEFT JOIN member ON TRUE LEFT JOIN page ON TRUE;
-- plan:
--   Nested Loop Left Join
--     [CTE member] Bitmap Heap Scan on memberships
--       Bitmap Index Scan on memberships_tenant_id_user_id_key
--     [CTE parent] Result
--       [InitPlan 2 (returns $1)] Index Only Scan using works_tenant_id_id_idx on works
--     [InitPlan 4 (returns $3)] CTE Scan on parent
--     [InitPlan 5 (returns $4)] Aggregate
--       Seq Scan on work_counts
--     Nested Loop Left Join
--       Result
--       CTE Scan on member
--     Materialize
--       Limit
--         [InitPlan 6 (returns $5)] CTE Scan on member member_1
--         [InitPlan 7 (returns $6)] CTE Scan on parent parent_1
--         Sort
--           Result
--             Merge Join
--               Index Scan using users_pkey on users u
--               Sort
--                 Index Scan Backward using requests_work_id_id_idx on requests r

-- operation: listRequests (search, a rare word)

SELECT r.id, r.work_id AS "workId", r.status::text AS status, r.title, r.message,
r.recipient_email AS "recipientEmail", r.recipient_first_name AS "recipientFirstName",
r.recipient_last_name AS "recipientLastName", r.answer, r.validation::text AS validation,
r.cancel_reason AS "cancelReason", r.due_at AS "dueAt", r.created_at AS "createdAt", r.updated_at AS "updatedAt",
r.confirmed_at AS "confirmedAt", r.validated_at AS "validatedAt", r.cancelled_at AS "cancelledAt",
r.email_status::text AS "emailStatus", r.email_sent_at AS "emailSentAt", r.email_failure AS "emailFailure",
r.emails_stopped AS "emailsStopped", r.confirmed_through_dev_mailbox AS "confirmedThroughDevMailbox",
u.email AS "ownerEmail", u.first_name AS "ownerFirstName", u.last_name AS "ownerLastName" FROM requests r JOIN users u ON u.id = r.owner_id
   WHERE r.work_id = $1::uuid AND r.tenant_id = $2::uuid AND r.search_prefixes @> $3::text[] ORDER BY r.id DESC LIMIT $4;
-- plan:
--   Limit
--     Sort
--       Merge Join
--         Index Scan using users_pkey on users u
--         Sort
--           Bitmap Heap Scan on requests r
--             Bitmap Index Scan on requests_search_idx

SELECT role::text AS role FROM memberships WHERE tenant_id = $1::uuid AND user_id = $2::uuid;
-- plan:
--   Bitmap Heap Scan on memberships
--     Bitmap Index Scan on memberships_tenant_id_user_id_key
-- generic plan (sent prepared):
--   Index Scan using memberships_tenant_id_id_idx on memberships

SELECT w.id, w.slug, w.name, w.description, w.created_at AS "createdAt", w.updated_at AS "updatedAt",
                 w.discarded_at AS "discardedAt", u.email AS "ownerEmail", u.first_name AS "ownerFirstName", u.last_name AS "ownerLastName" FROM works w JOIN users u ON u.id = w.owner_id
WHERE w.id = $1::uuid AND w.tenant_id = $2::uuid;
-- plan:
--   Merge Join
--     Index Scan using users_pkey on users u
--     Sort
--       Index Scan using works_tenant_id_id_idx on works w
-- generic plan (sent prepared):
--   Merge Join
--     Index Scan using users_pkey on users u
--     Sort
--       Index Scan using works_tenant_id_id_idx on works w

-- operation: listRequests (search, a word every request has)

SELECT COUNT(*) AS "_count$_all" FROM (SELECT "public"."requests"."id" FROM "public"."requests" WHERE ("public"."requests"."work_id" = $1 AND "public"."requests"."tenant_id" = $2 AND "public"."requests"."search_prefixes" @> $3) ORDER BY "public"."requests"."id" DESC LIMIT $4 OFFSET $5) AS "sub";
-- plan:
--   Aggregate
--     Limit
--       Index Scan Backward using requests_pkey on requests

SELECT r.id, r.work_id AS "workId", r.status::text AS status, r.title, r.message,
r.recipient_email AS "recipientEmail", r.recipient_first_name AS "recipientFirstName",
r.recipient_last_name AS "recipientLastName", r.answer, r.validation::text AS validation,
r.cancel_reason AS "cancelReason", r.due_at AS "dueAt", r.created_at AS "createdAt", r.updated_at AS "updatedAt",
r.confirmed_at AS "confirmedAt", r.validated_at AS "validatedAt", r.cancelled_at AS "cancelledAt",
r.email_status::text AS "emailStatus", r.email_sent_at AS "emailSentAt", r.email_failure AS "emailFailure",
r.emails_stopped AS "emailsStopped", r.confirmed_through_dev_mailbox AS "confirmedThroughDevMailbox",
u.email AS "ownerEmail", u.first_name AS "ownerFirstName", u.last_name AS "ownerLastName" FROM requests r JOIN users u ON u.id = r.owner_id
   WHERE r.work_id = $1::uuid AND r.tenant_id = $2::uuid AND r.search_prefixes @> $3::text[] ORDER BY r.id DESC LIMIT $4;
-- plan:
--   Limit
--     Nested Loop
--       Index Scan Backward using requests_pkey on requests r
--       Memoize
--         Index Scan using users_pkey on users u

SELECT role::text AS role FROM memberships WHERE tenant_id = $1::uuid AND user_id = $2::uuid;
-- plan:
--   Bitmap Heap Scan on memberships
--     Bitmap Index Scan on memberships_tenant_id_user_id_key
-- generic plan (sent prepared):
--   Index Scan using memberships_tenant_id_id_idx on memberships

SELECT w.id, w.slug, w.name, w.description, w.created_at AS "createdAt", w.updated_at AS "updatedAt",
                 w.discarded_at AS "discardedAt", u.email AS "ownerEmail", u.first_name AS "ownerFirstName", u.last_name AS "ownerLastName" FROM works w JOIN users u ON u.id = w.owner_id
WHERE w.id = $1::uuid AND w.tenant_id = $2::uuid;
-- plan:
--   Merge Join
--     Index Scan using users_pkey on users u
--     Sort
--       Index Scan using works_tenant_id_id_idx on works w
-- generic plan (sent prepared):
--   Merge Join
--     Index Scan using users_pkey on users u
--     Sort
--       Index Scan using works_tenant_id_id_idx on works w
