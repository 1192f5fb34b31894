-- Written by packages/server/test/integration/statement-plans.test.ts: the statements each operation sends
-- (in text order), with the shape of their plans on PostgreSQL. UPDATE_STATEMENT_PLANS=1 rewrites the file
-- (docs/development.md).

-- operation: listEvents (all)

WITH member AS (
  SELECT role::text AS role FROM memberships WHERE tenant_id = $1::uuid AND user_id = $2::uuid),
parent AS (SELECT TRUE AS found),
page AS (
  SELECT e.id, e.body FROM webhook_events e
  WHERE EXISTS (SELECT 1 FROM member) AND (SELECT found FROM parent)
    AND e.tenant_id = $1::uuid AND e.endpoint_id IS NULL AND e.id >= $3::uuid
  ORDER BY e.id DESC LIMIT $4)
SELECT member.role AS "__role", (SELECT found FROM parent) AS "__parent", CASE WHEN (SELECT count(*) FROM page) = $4 THEN (SELECT count(*)::int FROM (SELECT 1 FROM webhook_events e
                WHERE e.tenant_id = $1::uuid AND e.endpoint_id IS NULL AND e.id >= $3::uuid ORDER BY e.tenant_id DESC, e.id DESC LIMIT $5) AS counted) END AS "__count", page.*
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
--         Index Scan Backward using webhook_events_pkey on webhook_events e
--     [InitPlan 6 (returns $5)] CTE Scan on parent parent_1
--     [InitPlan 7 (returns $6)] Aggregate
--       CTE Scan on page page_1
--     [InitPlan 8 (returns $7)] Aggregate
--       Limit
--         Index Only Scan Backward using webhook_events_feed_idx on webhook_events e_1
--     Nested Loop Left Join
--       Result
--       CTE Scan on member
--     CTE Scan on page

-- operation: listEvents (by type)

WITH member AS (
  SELECT role::text AS role FROM memberships WHERE tenant_id = $1::uuid AND user_id = $2::uuid),
parent AS (SELECT TRUE AS found),
page AS (
  SELECT e.id, e.body FROM webhook_events e
  WHERE EXISTS (SELECT 1 FROM member) AND (SELECT found FROM parent)
    AND e.tenant_id = $1::uuid AND e.endpoint_id IS NULL AND e.type = ANY($3::text[]) AND e.id >= $4::uuid
  ORDER BY e.id DESC LIMIT $5)
SELECT member.role AS "__role", (SELECT found FROM parent) AS "__parent", CASE WHEN (SELECT count(*) FROM page) = $5 THEN (SELECT count(*)::int FROM (SELECT 1 FROM webhook_events e
                WHERE e.tenant_id = $1::uuid AND e.endpoint_id IS NULL AND e.type = ANY($3::text[]) AND e.id >= $4::uuid ORDER BY e.tenant_id DESC, e.id DESC LIMIT $6) AS counted) END AS "__count", page.*
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
--         Index Scan Backward using webhook_events_pkey on webhook_events e
--     [InitPlan 6 (returns $5)] CTE Scan on parent parent_1
--     [InitPlan 7 (returns $6)] Aggregate
--       CTE Scan on page page_1
--     [InitPlan 8 (returns $7)] Aggregate
--       Limit
--         Index Scan Backward using webhook_events_pkey on webhook_events e_1
--     Nested Loop Left Join
--       Result
--       CTE Scan on member
--     CTE Scan on page
