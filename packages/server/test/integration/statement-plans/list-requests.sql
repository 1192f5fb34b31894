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

WITH member AS (
     SELECT role::text AS role FROM memberships WHERE tenant_id = $1::uuid AND user_id = $2::uuid),
   parent AS (SELECT EXISTS (SELECT 1 FROM works WHERE id = $3::uuid AND tenant_id = $1::uuid) AS found),
   recent_matches AS (
     SELECT count(*) AS n FROM (SELECT 1 FROM (SELECT r.id AS id, r.search_prefixes, r.search FROM requests r
     WHERE r.work_id = $3::uuid AND r.tenant_id = $1::uuid ORDER BY r.id DESC LIMIT 2000) AS r
                                 WHERE r.search_prefixes @> $4::text[] LIMIT $5) AS walk),
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
       AND r.work_id = $3::uuid AND r.tenant_id = $1::uuid AND r.search_prefixes @> $4::text[]
     ORDER BY r.id DESC LIMIT $6)
   SELECT member.role AS "__role", (SELECT found FROM parent) AS "__parent", CASE WHEN (SELECT count(*) FROM page) = $6 THEN CASE WHEN (SELECT n FROM recent_matches) = $5 THEN $5::int
     WHEN (SELECT n FROM recent_matches) >= 100 THEN (SELECT count(*)::int FROM (SELECT 1 FROM requests r
                   WHERE r.work_id = $3::uuid AND r.tenant_id = $1::uuid AND r.search_prefixes @> $4::text[] ORDER BY r.id DESC LIMIT $5) AS counted)
     ELSE (SELECT count(*)::int FROM (SELECT 1 FROM requests r WHERE r.work_id = $3::uuid AND r.tenant_id = $1::uuid AND r.search_prefixes @> $4::text[] LIMIT $5) AS counted) END END AS "__count", page.*
   FROM (SELECT 1) AS one LEFT JOIN member ON TRUE LEFT JOIN page ON TRUE;
-- plan:
--   Nested Loop Left Join
--     [CTE member] Bitmap Heap Scan on memberships
--       Bitmap Index Scan on memberships_tenant_id_user_id_key
--     [CTE parent] Result
--       [InitPlan 2 (returns $1)] Index Only Scan using works_tenant_id_id_idx on works
--     [CTE recent_matches] Aggregate
--       Limit
--         Subquery Scan on r
--           Limit
--             Index Scan Backward using requests_pkey on requests r_1
--     [CTE page] Limit
--       [InitPlan 5 (returns $4)] CTE Scan on member member_1
--       [InitPlan 6 (returns $5)] CTE Scan on parent
--       Sort
--         Result
--           Merge Join
--             Index Scan using users_pkey on users u
--             Sort
--               Bitmap Heap Scan on requests r_2
--                 Bitmap Index Scan on requests_search_idx
--     [InitPlan 8 (returns $7)] CTE Scan on parent parent_1
--     [InitPlan 9 (returns $8)] Aggregate
--       CTE Scan on page page_1
--     [InitPlan 10 (returns $9)] CTE Scan on recent_matches
--     [InitPlan 11 (returns $10)] CTE Scan on recent_matches recent_matches_1
--     [InitPlan 12 (returns $11)] Aggregate
--       Limit
--         Sort
--           Bitmap Heap Scan on requests r_3
--             Bitmap Index Scan on requests_search_idx
--     [InitPlan 13 (returns $12)] Aggregate
--       Limit
--         Bitmap Heap Scan on requests r_4
--           Bitmap Index Scan on requests_search_idx
--     Nested Loop Left Join
--       Result
--       CTE Scan on member
--     CTE Scan on page

-- operation: listRequests (search, a word every request has)

WITH member AS (
     SELECT role::text AS role FROM memberships WHERE tenant_id = $1::uuid AND user_id = $2::uuid),
   parent AS (SELECT EXISTS (SELECT 1 FROM works WHERE id = $3::uuid AND tenant_id = $1::uuid) AS found),
   recent_matches AS (
     SELECT count(*) AS n FROM (SELECT 1 FROM (SELECT r.id AS id, r.search_prefixes, r.search FROM requests r
     WHERE r.work_id = $3::uuid AND r.tenant_id = $1::uuid ORDER BY r.id DESC LIMIT 2000) AS r
                                 WHERE r.search_prefixes @> $4::text[] LIMIT $5) AS walk),
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
       AND r.work_id = $3::uuid AND r.tenant_id = $1::uuid AND r.search_prefixes @> $4::text[]
     ORDER BY r.id DESC LIMIT $6)
   SELECT member.role AS "__role", (SELECT found FROM parent) AS "__parent", CASE WHEN (SELECT count(*) FROM page) = $6 THEN CASE WHEN (SELECT n FROM recent_matches) = $5 THEN $5::int
     WHEN (SELECT n FROM recent_matches) >= 100 THEN (SELECT count(*)::int FROM (SELECT 1 FROM requests r
                   WHERE r.work_id = $3::uuid AND r.tenant_id = $1::uuid AND r.search_prefixes @> $4::text[] ORDER BY r.id DESC LIMIT $5) AS counted)
     ELSE (SELECT count(*)::int FROM (SELECT 1 FROM requests r WHERE r.work_id = $3::uuid AND r.tenant_id = $1::uuid AND r.search_prefixes @> $4::text[] LIMIT $5) AS counted) END END AS "__count", page.*
   FROM (SELECT 1) AS one LEFT JOIN member ON TRUE LEFT JOIN page ON TRUE;
-- plan:
--   Nested Loop Left Join
--     [CTE member] Bitmap Heap Scan on memberships
--       Bitmap Index Scan on memberships_tenant_id_user_id_key
--     [CTE parent] Result
--       [InitPlan 2 (returns $1)] Index Only Scan using works_tenant_id_id_idx on works
--     [CTE recent_matches] Aggregate
--       Limit
--         Subquery Scan on r
--           Limit
--             Index Scan Backward using requests_pkey on requests r_1
--     [CTE page] Limit
--       [InitPlan 5 (returns $4)] CTE Scan on member member_1
--       [InitPlan 6 (returns $5)] CTE Scan on parent
--       Result
--         Nested Loop
--           Index Scan Backward using requests_pkey on requests r_2
--           Index Scan using users_pkey on users u
--     [InitPlan 8 (returns $8)] CTE Scan on parent parent_1
--     [InitPlan 9 (returns $9)] Aggregate
--       CTE Scan on page page_1
--     [InitPlan 10 (returns $10)] CTE Scan on recent_matches
--     [InitPlan 11 (returns $11)] CTE Scan on recent_matches recent_matches_1
--     [InitPlan 12 (returns $12)] Aggregate
--       Limit
--         Index Scan Backward using requests_pkey on requests r_3
--     [InitPlan 13 (returns $13)] Aggregate
--       Limit
--         Seq Scan on requests r_4
--     Nested Loop Left Join
--       Result
--       CTE Scan on member
--     CTE Scan on page

-- operation: listRequests (search, a middling word)

WITH member AS (
     SELECT role::text AS role FROM memberships WHERE tenant_id = $1::uuid AND user_id = $2::uuid),
   parent AS (SELECT EXISTS (SELECT 1 FROM works WHERE id = $3::uuid AND tenant_id = $1::uuid) AS found),
   recent_matches AS (
     SELECT count(*) AS n FROM (SELECT 1 FROM (SELECT r.id AS id, r.search_prefixes, r.search FROM requests r
     WHERE r.work_id = $3::uuid AND r.tenant_id = $1::uuid ORDER BY r.id DESC LIMIT 2000) AS r
                                 WHERE r.search_prefixes @> $4::text[] LIMIT $5) AS walk),
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
       AND r.work_id = $3::uuid AND r.tenant_id = $1::uuid AND r.search_prefixes @> $4::text[]
     ORDER BY r.id DESC LIMIT $6)
   SELECT member.role AS "__role", (SELECT found FROM parent) AS "__parent", CASE WHEN (SELECT count(*) FROM page) = $6 THEN CASE WHEN (SELECT n FROM recent_matches) = $5 THEN $5::int
     WHEN (SELECT n FROM recent_matches) >= 100 THEN (SELECT count(*)::int FROM (SELECT 1 FROM requests r
                   WHERE r.work_id = $3::uuid AND r.tenant_id = $1::uuid AND r.search_prefixes @> $4::text[] ORDER BY r.id DESC LIMIT $5) AS counted)
     ELSE (SELECT count(*)::int FROM (SELECT 1 FROM requests r WHERE r.work_id = $3::uuid AND r.tenant_id = $1::uuid AND r.search_prefixes @> $4::text[] LIMIT $5) AS counted) END END AS "__count", page.*
   FROM (SELECT 1) AS one LEFT JOIN member ON TRUE LEFT JOIN page ON TRUE;
-- plan:
--   Nested Loop Left Join
--     [CTE member] Bitmap Heap Scan on memberships
--       Bitmap Index Scan on memberships_tenant_id_user_id_key
--     [CTE parent] Result
--       [InitPlan 2 (returns $1)] Index Only Scan using works_tenant_id_id_idx on works
--     [CTE recent_matches] Aggregate
--       Limit
--         Subquery Scan on r
--           Limit
--             Index Scan Backward using requests_pkey on requests r_1
--     [CTE page] Limit
--       [InitPlan 5 (returns $4)] CTE Scan on member member_1
--       [InitPlan 6 (returns $5)] CTE Scan on parent
--       Result
--         Nested Loop
--           Index Scan Backward using requests_pkey on requests r_2
--           Index Scan using users_pkey on users u
--     [InitPlan 8 (returns $8)] CTE Scan on parent parent_1
--     [InitPlan 9 (returns $9)] Aggregate
--       CTE Scan on page page_1
--     [InitPlan 10 (returns $10)] CTE Scan on recent_matches
--     [InitPlan 11 (returns $11)] CTE Scan on recent_matches recent_matches_1
--     [InitPlan 12 (returns $12)] Aggregate
--       Limit
--         Sort
--           Bitmap Heap Scan on requests r_3
--             Bitmap Index Scan on requests_search_idx
--     [InitPlan 13 (returns $13)] Aggregate
--       Limit
--         Bitmap Heap Scan on requests r_4
--           Bitmap Index Scan on requests_search_idx
--     Nested Loop Left Join
--       Result
--       CTE Scan on member
--     CTE Scan on page
