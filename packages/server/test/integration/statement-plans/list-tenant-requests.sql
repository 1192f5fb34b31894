-- Written by packages/server/test/integration/statement-plans.test.ts: the statements each operation sends
-- (in text order), with the shape of their plans on PostgreSQL. UPDATE_STATEMENT_PLANS=1 rewrites the file
-- (docs/development.md).

-- operation: listTenantRequests (all)

WITH member AS (
     SELECT role::text AS role FROM memberships WHERE tenant_id = $1::uuid AND user_id = $2::uuid),
   parent AS (SELECT TRUE AS found),
   page AS (
     SELECT r.id, r.work_id AS "workId", r.status::text AS status, r.title, r.message,
r.recipient_email AS "recipientEmail", r.recipient_first_name AS "recipientFirstName",
r.recipient_last_name AS "recipientLastName", r.answer, r.validation::text AS validation,
r.cancel_reason AS "cancelReason", r.due_at AS "dueAt", r.created_at AS "createdAt", r.updated_at AS "updatedAt",
r.confirmed_at AS "confirmedAt", r.validated_at AS "validatedAt", r.cancelled_at AS "cancelledAt",
r.email_status::text AS "emailStatus", r.email_sent_at AS "emailSentAt", r.email_failure AS "emailFailure",
r.emails_stopped AS "emailsStopped", r.confirmed_through_dev_mailbox AS "confirmedThroughDevMailbox",
u.email AS "ownerEmail", u.first_name AS "ownerFirstName", u.last_name AS "ownerLastName" FROM requests r JOIN works w ON w.id = r.work_id JOIN users u ON u.id = r.owner_id
     WHERE EXISTS (SELECT 1 FROM member) AND (SELECT found FROM parent)
       AND r.tenant_id = $1::uuid AND w.discarded_at IS NULL
     ORDER BY r.id DESC LIMIT $3)
   SELECT member.role AS "__role", (SELECT found FROM parent) AS "__parent", CASE WHEN (SELECT count(*) FROM page) = $3 THEN (SELECT count(*)::int FROM (SELECT 1 FROM requests r JOIN works w ON w.id = r.work_id
                   WHERE r.tenant_id = $1::uuid AND w.discarded_at IS NULL ORDER BY r.tenant_id DESC, r.id DESC LIMIT $4) AS counted) END AS "__count", page.*
   FROM (SELECT 1) AS one LEFT JOIN member ON TRUE LEFT JOIN page ON TRUE;
-- plan:
--   Nested Loop Left Join
--     [CTE member] Bitmap Heap Scan on memberships
--       Bitmap Index Scan on memberships_tenant_id_user_id_key
--     [CTE parent] Result
--     [CTE page] Limit
--       [InitPlan 3 (returns $2)] CTE Scan on member member_1
--       [InitPlan 4 (returns $3)] CTE Scan on parent
--       Result
--         Nested Loop
--           Nested Loop
--             Index Scan Backward using requests_pkey on requests r
--             Memoize
--               Index Scan using works_pkey on works w
--           Index Scan using users_pkey on users u
--     [InitPlan 6 (returns $7)] CTE Scan on parent parent_1
--     [InitPlan 7 (returns $8)] Aggregate
--       CTE Scan on page page_1
--     [InitPlan 8 (returns $10)] Aggregate
--       Limit
--         Nested Loop
--           Index Only Scan Backward using requests_tenant_id_id_work_id_idx on requests r_1
--           Memoize
--             Index Scan using works_pkey on works w_1
--     Nested Loop Left Join
--       Result
--       CTE Scan on member
--     CTE Scan on page

-- operation: listTenantRequests (confirmed)

WITH member AS (
     SELECT role::text AS role FROM memberships WHERE tenant_id = $1::uuid AND user_id = $2::uuid),
   parent AS (SELECT TRUE AS found),
   page AS (
     SELECT r.id, r.work_id AS "workId", r.status::text AS status, r.title, r.message,
r.recipient_email AS "recipientEmail", r.recipient_first_name AS "recipientFirstName",
r.recipient_last_name AS "recipientLastName", r.answer, r.validation::text AS validation,
r.cancel_reason AS "cancelReason", r.due_at AS "dueAt", r.created_at AS "createdAt", r.updated_at AS "updatedAt",
r.confirmed_at AS "confirmedAt", r.validated_at AS "validatedAt", r.cancelled_at AS "cancelledAt",
r.email_status::text AS "emailStatus", r.email_sent_at AS "emailSentAt", r.email_failure AS "emailFailure",
r.emails_stopped AS "emailsStopped", r.confirmed_through_dev_mailbox AS "confirmedThroughDevMailbox",
u.email AS "ownerEmail", u.first_name AS "ownerFirstName", u.last_name AS "ownerLastName" FROM requests r JOIN works w ON w.id = r.work_id JOIN users u ON u.id = r.owner_id
     WHERE EXISTS (SELECT 1 FROM member) AND (SELECT found FROM parent)
       AND r.tenant_id = $1::uuid AND w.discarded_at IS NULL AND r.status = $3::request_status
     ORDER BY r.id DESC LIMIT $4)
   SELECT member.role AS "__role", (SELECT found FROM parent) AS "__parent", CASE WHEN (SELECT count(*) FROM page) = $4 THEN (SELECT count(*)::int FROM (SELECT 1 FROM requests r JOIN works w ON w.id = r.work_id
                   WHERE r.tenant_id = $1::uuid AND w.discarded_at IS NULL AND r.status = $3::request_status ORDER BY r.tenant_id DESC, r.status DESC, r.id DESC LIMIT $5) AS counted) END AS "__count", page.*
   FROM (SELECT 1) AS one LEFT JOIN member ON TRUE LEFT JOIN page ON TRUE;
-- plan:
--   Nested Loop Left Join
--     [CTE member] Bitmap Heap Scan on memberships
--       Bitmap Index Scan on memberships_tenant_id_user_id_key
--     [CTE parent] Result
--     [CTE page] Limit
--       [InitPlan 3 (returns $2)] CTE Scan on member member_1
--       [InitPlan 4 (returns $3)] CTE Scan on parent
--       Result
--         Nested Loop
--           Nested Loop
--             Index Scan Backward using requests_pkey on requests r
--             Memoize
--               Index Scan using works_pkey on works w
--           Index Scan using users_pkey on users u
--     [InitPlan 6 (returns $7)] CTE Scan on parent parent_1
--     [InitPlan 7 (returns $8)] Aggregate
--       CTE Scan on page page_1
--     [InitPlan 8 (returns $10)] Aggregate
--       Limit
--         Nested Loop
--           Index Only Scan Backward using requests_tenant_id_status_id_work_id_idx on requests r_1
--           Memoize
--             Index Scan using works_pkey on works w_1
--     Nested Loop Left Join
--       Result
--       CTE Scan on member
--     CTE Scan on page

-- operation: listTenantRequests (pending or confirmed)

WITH member AS (
     SELECT role::text AS role FROM memberships WHERE tenant_id = $1::uuid AND user_id = $2::uuid),
   parent AS (SELECT TRUE AS found),
   page AS (
     SELECT r.id, r.work_id AS "workId", r.status::text AS status, r.title, r.message,
r.recipient_email AS "recipientEmail", r.recipient_first_name AS "recipientFirstName",
r.recipient_last_name AS "recipientLastName", r.answer, r.validation::text AS validation,
r.cancel_reason AS "cancelReason", r.due_at AS "dueAt", r.created_at AS "createdAt", r.updated_at AS "updatedAt",
r.confirmed_at AS "confirmedAt", r.validated_at AS "validatedAt", r.cancelled_at AS "cancelledAt",
r.email_status::text AS "emailStatus", r.email_sent_at AS "emailSentAt", r.email_failure AS "emailFailure",
r.emails_stopped AS "emailsStopped", r.confirmed_through_dev_mailbox AS "confirmedThroughDevMailbox",
u.email AS "ownerEmail", u.first_name AS "ownerFirstName", u.last_name AS "ownerLastName" FROM requests r JOIN works w ON w.id = r.work_id JOIN users u ON u.id = r.owner_id
     WHERE EXISTS (SELECT 1 FROM member) AND (SELECT found FROM parent)
       AND r.tenant_id = $1::uuid AND w.discarded_at IS NULL AND r.status = ANY($3::request_status[])
     ORDER BY r.id DESC LIMIT $4)
   SELECT member.role AS "__role", (SELECT found FROM parent) AS "__parent", CASE WHEN (SELECT count(*) FROM page) = $4 THEN (SELECT count(*)::int FROM (SELECT 1 FROM requests r JOIN works w ON w.id = r.work_id
                   WHERE r.tenant_id = $1::uuid AND w.discarded_at IS NULL AND r.status = ANY($3::request_status[]) ORDER BY r.tenant_id DESC, r.id DESC LIMIT $5) AS counted) END AS "__count", page.*
   FROM (SELECT 1) AS one LEFT JOIN member ON TRUE LEFT JOIN page ON TRUE;
-- plan:
--   Nested Loop Left Join
--     [CTE member] Bitmap Heap Scan on memberships
--       Bitmap Index Scan on memberships_tenant_id_user_id_key
--     [CTE parent] Result
--     [CTE page] Limit
--       [InitPlan 3 (returns $2)] CTE Scan on member member_1
--       [InitPlan 4 (returns $3)] CTE Scan on parent
--       Result
--         Nested Loop
--           Nested Loop
--             Index Scan Backward using requests_pkey on requests r
--             Memoize
--               Index Scan using works_pkey on works w
--           Index Scan using users_pkey on users u
--     [InitPlan 6 (returns $7)] CTE Scan on parent parent_1
--     [InitPlan 7 (returns $8)] Aggregate
--       CTE Scan on page page_1
--     [InitPlan 8 (returns $10)] Aggregate
--       Limit
--         Nested Loop
--           Index Scan Backward using requests_pkey on requests r_1
--           Memoize
--             Index Scan using works_pkey on works w_1
--     Nested Loop Left Join
--       Result
--       CTE Scan on member
--     CTE Scan on page

-- operation: listTenantRequests (pending, overdue)

WITH member AS (
     SELECT role::text AS role FROM memberships WHERE tenant_id = $1::uuid AND user_id = $2::uuid),
   parent AS (SELECT TRUE AS found),
   page AS (
     SELECT r.id, r.work_id AS "workId", r.status::text AS status, r.title, r.message,
r.recipient_email AS "recipientEmail", r.recipient_first_name AS "recipientFirstName",
r.recipient_last_name AS "recipientLastName", r.answer, r.validation::text AS validation,
r.cancel_reason AS "cancelReason", r.due_at AS "dueAt", r.created_at AS "createdAt", r.updated_at AS "updatedAt",
r.confirmed_at AS "confirmedAt", r.validated_at AS "validatedAt", r.cancelled_at AS "cancelledAt",
r.email_status::text AS "emailStatus", r.email_sent_at AS "emailSentAt", r.email_failure AS "emailFailure",
r.emails_stopped AS "emailsStopped", r.confirmed_through_dev_mailbox AS "confirmedThroughDevMailbox",
u.email AS "ownerEmail", u.first_name AS "ownerFirstName", u.last_name AS "ownerLastName" FROM requests r JOIN works w ON w.id = r.work_id JOIN users u ON u.id = r.owner_id
     WHERE EXISTS (SELECT 1 FROM member) AND (SELECT found FROM parent)
       AND r.tenant_id = $1::uuid AND w.discarded_at IS NULL AND r.status = $3::request_status AND r.due_at < $4::timestamptz
     ORDER BY r.id DESC LIMIT $5)
   SELECT member.role AS "__role", (SELECT found FROM parent) AS "__parent", CASE WHEN (SELECT count(*) FROM page) = $5 THEN (SELECT count(*)::int FROM (SELECT 1 FROM requests r JOIN works w ON w.id = r.work_id
                   WHERE r.tenant_id = $1::uuid AND w.discarded_at IS NULL AND r.status = $3::request_status AND r.due_at < $4::timestamptz ORDER BY r.tenant_id DESC, r.status DESC, r.id DESC LIMIT $6) AS counted) END AS "__count", page.*
   FROM (SELECT 1) AS one LEFT JOIN member ON TRUE LEFT JOIN page ON TRUE;
-- plan:
--   Nested Loop Left Join
--     [CTE member] Bitmap Heap Scan on memberships
--       Bitmap Index Scan on memberships_tenant_id_user_id_key
--     [CTE parent] Result
--     [CTE page] Limit
--       [InitPlan 3 (returns $2)] CTE Scan on member member_1
--       [InitPlan 4 (returns $3)] CTE Scan on parent
--       Sort
--         Result
--           Nested Loop
--             Merge Join
--               Index Scan using users_pkey on users u
--               Sort
--                 Index Scan Backward using requests_tenant_id_id_due_idx on requests r
--             Index Scan using works_pkey on works w
--     [InitPlan 6 (returns $6)] CTE Scan on parent parent_1
--     [InitPlan 7 (returns $7)] Aggregate
--       CTE Scan on page page_1
--     [InitPlan 8 (returns $9)] Aggregate
--       Limit
--         Nested Loop
--           Index Scan Backward using requests_tenant_id_id_due_idx on requests r_1
--           Index Scan using works_pkey on works w_1
--     Nested Loop Left Join
--       Result
--       CTE Scan on member
--     CTE Scan on page

-- operation: listTenantRequests (by recipient)

WITH member AS (
     SELECT role::text AS role FROM memberships WHERE tenant_id = $1::uuid AND user_id = $2::uuid),
   parent AS (SELECT TRUE AS found),
   page AS (
     SELECT r.id, r.work_id AS "workId", r.status::text AS status, r.title, r.message,
r.recipient_email AS "recipientEmail", r.recipient_first_name AS "recipientFirstName",
r.recipient_last_name AS "recipientLastName", r.answer, r.validation::text AS validation,
r.cancel_reason AS "cancelReason", r.due_at AS "dueAt", r.created_at AS "createdAt", r.updated_at AS "updatedAt",
r.confirmed_at AS "confirmedAt", r.validated_at AS "validatedAt", r.cancelled_at AS "cancelledAt",
r.email_status::text AS "emailStatus", r.email_sent_at AS "emailSentAt", r.email_failure AS "emailFailure",
r.emails_stopped AS "emailsStopped", r.confirmed_through_dev_mailbox AS "confirmedThroughDevMailbox",
u.email AS "ownerEmail", u.first_name AS "ownerFirstName", u.last_name AS "ownerLastName" FROM requests r JOIN works w ON w.id = r.work_id JOIN users u ON u.id = r.owner_id
     WHERE EXISTS (SELECT 1 FROM member) AND (SELECT found FROM parent)
       AND r.tenant_id = $1::uuid AND w.discarded_at IS NULL AND r.recipient_email = $3
     ORDER BY r.id DESC LIMIT $4)
   SELECT member.role AS "__role", (SELECT found FROM parent) AS "__parent", CASE WHEN (SELECT count(*) FROM page) = $4 THEN (SELECT count(*)::int FROM (SELECT 1 FROM requests r JOIN works w ON w.id = r.work_id
                   WHERE r.tenant_id = $1::uuid AND w.discarded_at IS NULL AND r.recipient_email = $3 ORDER BY r.tenant_id DESC, r.recipient_email DESC, r.id DESC LIMIT $5) AS counted) END AS "__count", page.*
   FROM (SELECT 1) AS one LEFT JOIN member ON TRUE LEFT JOIN page ON TRUE;
-- plan:
--   Nested Loop Left Join
--     [CTE member] Bitmap Heap Scan on memberships
--       Bitmap Index Scan on memberships_tenant_id_user_id_key
--     [CTE parent] Result
--     [CTE page] Limit
--       [InitPlan 3 (returns $2)] CTE Scan on member member_1
--       [InitPlan 4 (returns $3)] CTE Scan on parent
--       Sort
--         Result
--           Merge Join
--             Index Scan using users_pkey on users u
--             Sort
--               Nested Loop
--                 Index Scan Backward using requests_tenant_id_recipient_email_id_work_id_idx on requests r
--                 Memoize
--                   Index Scan using works_pkey on works w
--     [InitPlan 6 (returns $6)] CTE Scan on parent parent_1
--     [InitPlan 7 (returns $7)] Aggregate
--       CTE Scan on page page_1
--     [InitPlan 8 (returns $9)] Aggregate
--       Limit
--         Nested Loop
--           Index Only Scan Backward using requests_tenant_id_recipient_email_id_work_id_idx on requests r_1
--           Memoize
--             Index Scan using works_pkey on works w_1
--     Nested Loop Left Join
--       Result
--       CTE Scan on member
--     CTE Scan on page

-- operation: listTenantRequests (by work, validated)

WITH member AS (
     SELECT role::text AS role FROM memberships WHERE tenant_id = $1::uuid AND user_id = $2::uuid),
   parent AS (SELECT TRUE AS found),
   page AS (
     SELECT r.id, r.work_id AS "workId", r.status::text AS status, r.title, r.message,
r.recipient_email AS "recipientEmail", r.recipient_first_name AS "recipientFirstName",
r.recipient_last_name AS "recipientLastName", r.answer, r.validation::text AS validation,
r.cancel_reason AS "cancelReason", r.due_at AS "dueAt", r.created_at AS "createdAt", r.updated_at AS "updatedAt",
r.confirmed_at AS "confirmedAt", r.validated_at AS "validatedAt", r.cancelled_at AS "cancelledAt",
r.email_status::text AS "emailStatus", r.email_sent_at AS "emailSentAt", r.email_failure AS "emailFailure",
r.emails_stopped AS "emailsStopped", r.confirmed_through_dev_mailbox AS "confirmedThroughDevMailbox",
u.email AS "ownerEmail", u.first_name AS "ownerFirstName", u.last_name AS "ownerLastName" FROM requests r JOIN works w ON w.id = r.work_id JOIN users u ON u.id = r.owner_id
     WHERE EXISTS (SELECT 1 FROM member) AND (SELECT found FROM parent)
       AND r.tenant_id = $1::uuid AND w.discarded_at IS NULL AND r.status = $3::request_status AND r.work_id = $4::uuid
     ORDER BY r.id DESC LIMIT $5)
   SELECT member.role AS "__role", (SELECT found FROM parent) AS "__parent", CASE WHEN (SELECT count(*) FROM page) = $5 THEN (SELECT count(*)::int FROM (SELECT 1 FROM requests r JOIN works w ON w.id = r.work_id
                   WHERE r.tenant_id = $1::uuid AND w.discarded_at IS NULL AND r.status = $3::request_status AND r.work_id = $4::uuid ORDER BY r.work_id DESC, r.status DESC, r.id DESC LIMIT $6) AS counted) END AS "__count", page.*
   FROM (SELECT 1) AS one LEFT JOIN member ON TRUE LEFT JOIN page ON TRUE;
-- plan:
--   Nested Loop Left Join
--     [CTE member] Bitmap Heap Scan on memberships
--       Bitmap Index Scan on memberships_tenant_id_user_id_key
--     [CTE parent] Result
--     [CTE page] Limit
--       [InitPlan 3 (returns $2)] CTE Scan on member member_1
--       [InitPlan 4 (returns $3)] CTE Scan on parent
--       Result
--         Nested Loop
--           Nested Loop
--             Index Scan Backward using requests_pkey on requests r
--             Memoize
--               Index Scan using users_pkey on users u
--           Materialize
--             Index Scan using works_pkey on works w
--     [InitPlan 6 (returns $6)] CTE Scan on parent parent_1
--     [InitPlan 7 (returns $7)] Aggregate
--       CTE Scan on page page_1
--     [InitPlan 8 (returns $8)] Aggregate
--       Limit
--         Nested Loop
--           Index Only Scan Backward using requests_tenant_id_status_id_work_id_idx on requests r_1
--           Materialize
--             Index Scan using works_pkey on works w_1
--     Nested Loop Left Join
--       Result
--       CTE Scan on member
--     CTE Scan on page

-- operation: listTenantRequests (search, a rare word)

WITH member AS (
     SELECT role::text AS role FROM memberships WHERE tenant_id = $1::uuid AND user_id = $2::uuid),
   parent AS (SELECT TRUE AS found),
   recent_matches AS (
     SELECT count(*) AS n FROM (SELECT 1 FROM (SELECT r.id AS id, r.search_prefixes, r.search FROM requests r JOIN works w ON w.id = r.work_id
     WHERE r.tenant_id = $1::uuid AND w.discarded_at IS NULL ORDER BY r.id DESC LIMIT 2000) AS r
                                 WHERE r.search_prefixes @> $3::text[] LIMIT $4) AS walk),
   page AS (
     SELECT r.id, r.work_id AS "workId", r.status::text AS status, r.title, r.message,
r.recipient_email AS "recipientEmail", r.recipient_first_name AS "recipientFirstName",
r.recipient_last_name AS "recipientLastName", r.answer, r.validation::text AS validation,
r.cancel_reason AS "cancelReason", r.due_at AS "dueAt", r.created_at AS "createdAt", r.updated_at AS "updatedAt",
r.confirmed_at AS "confirmedAt", r.validated_at AS "validatedAt", r.cancelled_at AS "cancelledAt",
r.email_status::text AS "emailStatus", r.email_sent_at AS "emailSentAt", r.email_failure AS "emailFailure",
r.emails_stopped AS "emailsStopped", r.confirmed_through_dev_mailbox AS "confirmedThroughDevMailbox",
u.email AS "ownerEmail", u.first_name AS "ownerFirstName", u.last_name AS "ownerLastName" FROM requests r JOIN works w ON w.id = r.work_id JOIN users u ON u.id = r.owner_id
     WHERE EXISTS (SELECT 1 FROM member) AND (SELECT found FROM parent)
       AND r.tenant_id = $1::uuid AND w.discarded_at IS NULL AND r.search_prefixes @> $3::text[]
     ORDER BY r.id DESC LIMIT $5)
   SELECT member.role AS "__role", (SELECT found FROM parent) AS "__parent", CASE WHEN (SELECT count(*) FROM page) = $5 THEN CASE WHEN (SELECT n FROM recent_matches) = $4 THEN $4::int
     WHEN (SELECT n FROM recent_matches) >= 100 THEN (SELECT count(*)::int FROM (SELECT 1 FROM requests r JOIN works w ON w.id = r.work_id
                   WHERE r.tenant_id = $1::uuid AND w.discarded_at IS NULL AND r.search_prefixes @> $3::text[] ORDER BY r.id DESC LIMIT $4) AS counted)
     ELSE (SELECT count(*)::int FROM (SELECT 1 FROM requests r JOIN works w ON w.id = r.work_id WHERE r.tenant_id = $1::uuid AND w.discarded_at IS NULL AND r.search_prefixes @> $3::text[] LIMIT $4) AS counted) END END AS "__count", page.*
   FROM (SELECT 1) AS one LEFT JOIN member ON TRUE LEFT JOIN page ON TRUE;
-- plan:
--   Nested Loop Left Join
--     [CTE member] Bitmap Heap Scan on memberships
--       Bitmap Index Scan on memberships_tenant_id_user_id_key
--     [CTE parent] Result
--     [CTE recent_matches] Aggregate
--       Limit
--         Subquery Scan on r
--           Limit
--             Nested Loop
--               Index Scan Backward using requests_pkey on requests r_1
--               Memoize
--                 Index Scan using works_pkey on works w
--     [CTE page] Limit
--       [InitPlan 4 (returns $4)] CTE Scan on member member_1
--       [InitPlan 5 (returns $5)] CTE Scan on parent
--       Sort
--         Result
--           Merge Join
--             Index Scan using users_pkey on users u
--             Sort
--               Nested Loop
--                 Bitmap Heap Scan on requests r_2
--                   Bitmap Index Scan on requests_search_idx
--                 Memoize
--                   Index Scan using works_pkey on works w_1
--     [InitPlan 7 (returns $8)] CTE Scan on parent parent_1
--     [InitPlan 8 (returns $9)] Aggregate
--       CTE Scan on page page_1
--     [InitPlan 9 (returns $10)] CTE Scan on recent_matches
--     [InitPlan 10 (returns $11)] CTE Scan on recent_matches recent_matches_1
--     [InitPlan 11 (returns $13)] Aggregate
--       Limit
--         Sort
--           Nested Loop
--             Bitmap Heap Scan on requests r_3
--               Bitmap Index Scan on requests_search_idx
--             Memoize
--               Index Scan using works_pkey on works w_2
--     [InitPlan 12 (returns $15)] Aggregate
--       Limit
--         Nested Loop
--           Bitmap Heap Scan on requests r_4
--             Bitmap Index Scan on requests_search_idx
--           Memoize
--             Index Scan using works_pkey on works w_3
--     Nested Loop Left Join
--       Result
--       CTE Scan on member
--     CTE Scan on page

-- operation: listTenantRequests (search, a rare word, confirmed)

WITH member AS (
     SELECT role::text AS role FROM memberships WHERE tenant_id = $1::uuid AND user_id = $2::uuid),
   parent AS (SELECT TRUE AS found),
   recent_matches AS (
     SELECT count(*) AS n FROM (SELECT 1 FROM (SELECT r.id AS id, r.search_prefixes, r.search FROM requests r JOIN works w ON w.id = r.work_id
     WHERE r.tenant_id = $1::uuid AND w.discarded_at IS NULL AND r.status = $3::request_status ORDER BY r.id DESC LIMIT 2000) AS r
                                 WHERE r.search_prefixes @> $4::text[] LIMIT $5) AS walk),
   page AS (
     SELECT r.id, r.work_id AS "workId", r.status::text AS status, r.title, r.message,
r.recipient_email AS "recipientEmail", r.recipient_first_name AS "recipientFirstName",
r.recipient_last_name AS "recipientLastName", r.answer, r.validation::text AS validation,
r.cancel_reason AS "cancelReason", r.due_at AS "dueAt", r.created_at AS "createdAt", r.updated_at AS "updatedAt",
r.confirmed_at AS "confirmedAt", r.validated_at AS "validatedAt", r.cancelled_at AS "cancelledAt",
r.email_status::text AS "emailStatus", r.email_sent_at AS "emailSentAt", r.email_failure AS "emailFailure",
r.emails_stopped AS "emailsStopped", r.confirmed_through_dev_mailbox AS "confirmedThroughDevMailbox",
u.email AS "ownerEmail", u.first_name AS "ownerFirstName", u.last_name AS "ownerLastName" FROM requests r JOIN works w ON w.id = r.work_id JOIN users u ON u.id = r.owner_id
     WHERE EXISTS (SELECT 1 FROM member) AND (SELECT found FROM parent)
       AND r.tenant_id = $1::uuid AND w.discarded_at IS NULL AND r.status = $3::request_status AND r.search_prefixes @> $4::text[]
     ORDER BY r.id DESC LIMIT $6)
   SELECT member.role AS "__role", (SELECT found FROM parent) AS "__parent", CASE WHEN (SELECT count(*) FROM page) = $6 THEN CASE WHEN (SELECT n FROM recent_matches) = $5 THEN $5::int
     WHEN (SELECT n FROM recent_matches) >= 100 THEN (SELECT count(*)::int FROM (SELECT 1 FROM requests r JOIN works w ON w.id = r.work_id
                   WHERE r.tenant_id = $1::uuid AND w.discarded_at IS NULL AND r.status = $3::request_status AND r.search_prefixes @> $4::text[] ORDER BY r.id DESC LIMIT $5) AS counted)
     ELSE (SELECT count(*)::int FROM (SELECT 1 FROM requests r JOIN works w ON w.id = r.work_id WHERE r.tenant_id = $1::uuid AND w.discarded_at IS NULL AND r.status = $3::request_status AND r.search_prefixes @> $4::text[] LIMIT $5) AS counted) END END AS "__count", page.*
   FROM (SELECT 1) AS one LEFT JOIN member ON TRUE LEFT JOIN page ON TRUE;
-- plan:
--   Nested Loop Left Join
--     [CTE member] Bitmap Heap Scan on memberships
--       Bitmap Index Scan on memberships_tenant_id_user_id_key
--     [CTE parent] Result
--     [CTE recent_matches] Aggregate
--       Limit
--         Subquery Scan on r
--           Limit
--             Nested Loop
--               Index Scan Backward using requests_pkey on requests r_1
--               Memoize
--                 Index Scan using works_pkey on works w
--     [CTE page] Limit
--       [InitPlan 4 (returns $4)] CTE Scan on member member_1
--       [InitPlan 5 (returns $5)] CTE Scan on parent
--       Sort
--         Result
--           Merge Join
--             Index Scan using users_pkey on users u
--             Sort
--               Nested Loop
--                 Bitmap Heap Scan on requests r_2
--                   Bitmap Index Scan on requests_search_idx
--                 Memoize
--                   Index Scan using works_pkey on works w_1
--     [InitPlan 7 (returns $8)] CTE Scan on parent parent_1
--     [InitPlan 8 (returns $9)] Aggregate
--       CTE Scan on page page_1
--     [InitPlan 9 (returns $10)] CTE Scan on recent_matches
--     [InitPlan 10 (returns $11)] CTE Scan on recent_matches recent_matches_1
--     [InitPlan 11 (returns $13)] Aggregate
--       Limit
--         Sort
--           Nested Loop
--             Bitmap Heap Scan on requests r_3
--               Bitmap Index Scan on requests_search_idx
--             Memoize
--               Index Scan using works_pkey on works w_2
--     [InitPlan 12 (returns $15)] Aggregate
--       Limit
--         Nested Loop
--           Bitmap Heap Scan on requests r_4
--             Bitmap Index Scan on requests_search_idx
--           Memoize
--             Index Scan using works_pkey on works w_3
--     Nested Loop Left Join
--       Result
--       CTE Scan on member
--     CTE Scan on page

-- operation: listTenantRequests (search, a common word)

WITH member AS (
     SELECT role::text AS role FROM memberships WHERE tenant_id = $1::uuid AND user_id = $2::uuid),
   parent AS (SELECT TRUE AS found),
   recent_matches AS (
     SELECT count(*) AS n FROM (SELECT 1 FROM (SELECT r.id AS id, r.search_prefixes, r.search FROM requests r JOIN works w ON w.id = r.work_id
     WHERE r.tenant_id = $1::uuid AND w.discarded_at IS NULL ORDER BY r.id DESC LIMIT 2000) AS r
                                 WHERE r.search_prefixes @> $3::text[] LIMIT $4) AS walk),
   page AS (
     SELECT r.id, r.work_id AS "workId", r.status::text AS status, r.title, r.message,
r.recipient_email AS "recipientEmail", r.recipient_first_name AS "recipientFirstName",
r.recipient_last_name AS "recipientLastName", r.answer, r.validation::text AS validation,
r.cancel_reason AS "cancelReason", r.due_at AS "dueAt", r.created_at AS "createdAt", r.updated_at AS "updatedAt",
r.confirmed_at AS "confirmedAt", r.validated_at AS "validatedAt", r.cancelled_at AS "cancelledAt",
r.email_status::text AS "emailStatus", r.email_sent_at AS "emailSentAt", r.email_failure AS "emailFailure",
r.emails_stopped AS "emailsStopped", r.confirmed_through_dev_mailbox AS "confirmedThroughDevMailbox",
u.email AS "ownerEmail", u.first_name AS "ownerFirstName", u.last_name AS "ownerLastName" FROM requests r JOIN works w ON w.id = r.work_id JOIN users u ON u.id = r.owner_id
     WHERE EXISTS (SELECT 1 FROM member) AND (SELECT found FROM parent)
       AND r.tenant_id = $1::uuid AND w.discarded_at IS NULL AND r.search_prefixes @> $3::text[]
     ORDER BY r.id DESC LIMIT $5)
   SELECT member.role AS "__role", (SELECT found FROM parent) AS "__parent", CASE WHEN (SELECT count(*) FROM page) = $5 THEN CASE WHEN (SELECT n FROM recent_matches) = $4 THEN $4::int
     WHEN (SELECT n FROM recent_matches) >= 100 THEN (SELECT count(*)::int FROM (SELECT 1 FROM requests r JOIN works w ON w.id = r.work_id
                   WHERE r.tenant_id = $1::uuid AND w.discarded_at IS NULL AND r.search_prefixes @> $3::text[] ORDER BY r.id DESC LIMIT $4) AS counted)
     ELSE (SELECT count(*)::int FROM (SELECT 1 FROM requests r JOIN works w ON w.id = r.work_id WHERE r.tenant_id = $1::uuid AND w.discarded_at IS NULL AND r.search_prefixes @> $3::text[] LIMIT $4) AS counted) END END AS "__count", page.*
   FROM (SELECT 1) AS one LEFT JOIN member ON TRUE LEFT JOIN page ON TRUE;
-- plan:
--   Nested Loop Left Join
--     [CTE member] Bitmap Heap Scan on memberships
--       Bitmap Index Scan on memberships_tenant_id_user_id_key
--     [CTE parent] Result
--     [CTE recent_matches] Aggregate
--       Limit
--         Subquery Scan on r
--           Limit
--             Nested Loop
--               Index Scan Backward using requests_pkey on requests r_1
--               Memoize
--                 Index Scan using works_pkey on works w
--     [CTE page] Limit
--       [InitPlan 4 (returns $4)] CTE Scan on member member_1
--       [InitPlan 5 (returns $5)] CTE Scan on parent
--       Result
--         Nested Loop
--           Nested Loop
--             Index Scan Backward using requests_pkey on requests r_2
--             Memoize
--               Index Scan using works_pkey on works w_1
--           Index Scan using users_pkey on users u
--     [InitPlan 7 (returns $9)] CTE Scan on parent parent_1
--     [InitPlan 8 (returns $10)] Aggregate
--       CTE Scan on page page_1
--     [InitPlan 9 (returns $11)] CTE Scan on recent_matches
--     [InitPlan 10 (returns $12)] CTE Scan on recent_matches recent_matches_1
--     [InitPlan 11 (returns $14)] Aggregate
--       Limit
--         Nested Loop
--           Index Scan Backward using requests_pkey on requests r_3
--           Memoize
--             Index Scan using works_pkey on works w_2
--     [InitPlan 12 (returns $16)] Aggregate
--       Limit
--         Nested Loop
--           Seq Scan on requests r_4
--           Memoize
--             Index Scan using works_pkey on works w_3
--     Nested Loop Left Join
--       Result
--       CTE Scan on member
--     CTE Scan on page

-- operation: listTenantRequests (search, a middling word)

WITH member AS (
     SELECT role::text AS role FROM memberships WHERE tenant_id = $1::uuid AND user_id = $2::uuid),
   parent AS (SELECT TRUE AS found),
   recent_matches AS (
     SELECT count(*) AS n FROM (SELECT 1 FROM (SELECT r.id AS id, r.search_prefixes, r.search FROM requests r JOIN works w ON w.id = r.work_id
     WHERE r.tenant_id = $1::uuid AND w.discarded_at IS NULL ORDER BY r.id DESC LIMIT 2000) AS r
                                 WHERE r.search_prefixes @> $3::text[] LIMIT $4) AS walk),
   page AS (
     SELECT r.id, r.work_id AS "workId", r.status::text AS status, r.title, r.message,
r.recipient_email AS "recipientEmail", r.recipient_first_name AS "recipientFirstName",
r.recipient_last_name AS "recipientLastName", r.answer, r.validation::text AS validation,
r.cancel_reason AS "cancelReason", r.due_at AS "dueAt", r.created_at AS "createdAt", r.updated_at AS "updatedAt",
r.confirmed_at AS "confirmedAt", r.validated_at AS "validatedAt", r.cancelled_at AS "cancelledAt",
r.email_status::text AS "emailStatus", r.email_sent_at AS "emailSentAt", r.email_failure AS "emailFailure",
r.emails_stopped AS "emailsStopped", r.confirmed_through_dev_mailbox AS "confirmedThroughDevMailbox",
u.email AS "ownerEmail", u.first_name AS "ownerFirstName", u.last_name AS "ownerLastName" FROM requests r JOIN works w ON w.id = r.work_id JOIN users u ON u.id = r.owner_id
     WHERE EXISTS (SELECT 1 FROM member) AND (SELECT found FROM parent)
       AND r.tenant_id = $1::uuid AND w.discarded_at IS NULL AND r.search_prefixes @> $3::text[]
     ORDER BY r.id DESC LIMIT $5)
   SELECT member.role AS "__role", (SELECT found FROM parent) AS "__parent", CASE WHEN (SELECT count(*) FROM page) = $5 THEN CASE WHEN (SELECT n FROM recent_matches) = $4 THEN $4::int
     WHEN (SELECT n FROM recent_matches) >= 100 THEN (SELECT count(*)::int FROM (SELECT 1 FROM requests r JOIN works w ON w.id = r.work_id
                   WHERE r.tenant_id = $1::uuid AND w.discarded_at IS NULL AND r.search_prefixes @> $3::text[] ORDER BY r.id DESC LIMIT $4) AS counted)
     ELSE (SELECT count(*)::int FROM (SELECT 1 FROM requests r JOIN works w ON w.id = r.work_id WHERE r.tenant_id = $1::uuid AND w.discarded_at IS NULL AND r.search_prefixes @> $3::text[] LIMIT $4) AS counted) END END AS "__count", page.*
   FROM (SELECT 1) AS one LEFT JOIN member ON TRUE LEFT JOIN page ON TRUE;
-- plan:
--   Nested Loop Left Join
--     [CTE member] Bitmap Heap Scan on memberships
--       Bitmap Index Scan on memberships_tenant_id_user_id_key
--     [CTE parent] Result
--     [CTE recent_matches] Aggregate
--       Limit
--         Subquery Scan on r
--           Limit
--             Nested Loop
--               Index Scan Backward using requests_pkey on requests r_1
--               Memoize
--                 Index Scan using works_pkey on works w
--     [CTE page] Limit
--       [InitPlan 4 (returns $4)] CTE Scan on member member_1
--       [InitPlan 5 (returns $5)] CTE Scan on parent
--       Result
--         Nested Loop
--           Nested Loop
--             Index Scan Backward using requests_pkey on requests r_2
--             Memoize
--               Index Scan using works_pkey on works w_1
--           Index Scan using users_pkey on users u
--     [InitPlan 7 (returns $9)] CTE Scan on parent parent_1
--     [InitPlan 8 (returns $10)] Aggregate
--       CTE Scan on page page_1
--     [InitPlan 9 (returns $11)] CTE Scan on recent_matches
--     [InitPlan 10 (returns $12)] CTE Scan on recent_matches recent_matches_1
--     [InitPlan 11 (returns $14)] Aggregate
--       Limit
--         Sort
--           Nested Loop
--             Bitmap Heap Scan on requests r_3
--               Bitmap Index Scan on requests_search_idx
--             Memoize
--               Index Scan using works_pkey on works w_2
--     [InitPlan 12 (returns $16)] Aggregate
--       Limit
--         Nested Loop
--           Bitmap Heap Scan on requests r_4
--             Bitmap Index Scan on requests_search_idx
--           Memoize
--             Index Scan using works_pkey on works w_3
--     Nested Loop Left Join
--       Result
--       CTE Scan on member
--     CTE Scan on page

-- operation: listTenantRequests (after the 15,000th)

WITH member AS (
     SELECT role::text AS role FROM memberships WHERE tenant_id = $1::uuid AND user_id = $2::uuid),
   parent AS (SELECT TRUE AS found),
   page AS (
     SELECT r.id, r.work_id AS "workId", r.status::text AS status, r.title, r.message,
r.recipient_email AS "recipientEmail", r.recipient_first_name AS "recipientFirstName",
r.recipient_last_name AS "recipientLastName", r.answer, r.validation::text AS validation,
r.cancel_reason AS "cancelReason", r.due_at AS "dueAt", r.created_at AS "createdAt", r.updated_at AS "updatedAt",
r.confirmed_at AS "confirmedAt", r.validated_at AS "validatedAt", r.cancelled_at AS "cancelledAt",
r.email_status::text AS "emailStatus", r.email_sent_at AS "emailSentAt", r.email_failure AS "emailFailure",
r.emails_stopped AS "emailsStopped", r.confirmed_through_dev_mailbox AS "confirmedThroughDevMailbox",
u.email AS "ownerEmail", u.first_name AS "ownerFirstName", u.last_name AS "ownerLastName" FROM requests r JOIN works w ON w.id = r.work_id JOIN users u ON u.id = r.owner_id
     WHERE EXISTS (SELECT 1 FROM member) AND (SELECT found FROM parent)
       AND r.tenant_id = $1::uuid AND w.discarded_at IS NULL AND r.id < $3::uuid
     ORDER BY r.id DESC LIMIT $4)
   SELECT member.role AS "__role", (SELECT found FROM parent) AS "__parent", CASE WHEN TRUE THEN (SELECT count(*)::int FROM (SELECT 1 FROM requests r JOIN works w ON w.id = r.work_id
                   WHERE r.tenant_id = $1::uuid AND w.discarded_at IS NULL ORDER BY r.tenant_id DESC, r.id DESC LIMIT $5) AS counted) END AS "__count", page.*
   FROM (SELECT 1) AS one LEFT JOIN member ON TRUE LEFT JOIN page ON TRUE;
-- plan:
--   Nested Loop Left Join
--     [CTE member] Bitmap Heap Scan on memberships
--       Bitmap Index Scan on memberships_tenant_id_user_id_key
--     [CTE parent] Result
--     [InitPlan 3 (returns $2)] CTE Scan on parent
--     [InitPlan 4 (returns $4)] Aggregate
--       Limit
--         Nested Loop
--           Index Only Scan Backward using requests_tenant_id_id_work_id_idx on requests r_1
--           Memoize
--             Index Scan using works_pkey on works w_1
--     Nested Loop Left Join
--       Result
--       CTE Scan on member
--     Materialize
--       Limit
--         [InitPlan 5 (returns $5)] CTE Scan on member member_1
--         [InitPlan 6 (returns $6)] CTE Scan on parent parent_1
--         Result
--           Nested Loop
--             Nested Loop
--               Index Scan Backward using requests_pkey on requests r
--               Memoize
--                 Index Scan using works_pkey on works w
--             Index Scan using users_pkey on users u
