-- Written by packages/server/test/integration/statement-plans.test.ts: the statements each operation sends
-- (in text order), with the shape of their plans on PostgreSQL. UPDATE_STATEMENT_PLANS=1 rewrites the file
-- (docs/development.md).

-- operation: listWorks (kept)

WITH member AS (
  SELECT role::text AS role FROM memberships WHERE tenant_id = $1::uuid AND user_id = $2::uuid),
parent AS (SELECT TRUE AS found),
page AS (
  SELECT w.id, w.slug, w.name, w.description, w.created_at AS "createdAt", w.updated_at AS "updatedAt",
                 w.discarded_at AS "discardedAt", u.email AS "ownerEmail", u.first_name AS "ownerFirstName", u.last_name AS "ownerLastName" FROM works w JOIN users u ON u.id = w.owner_id
  WHERE EXISTS (SELECT 1 FROM member) AND (SELECT found FROM parent)
    AND w.tenant_id = $1::uuid AND w.discarded_at IS NULL
  ORDER BY w.id DESC LIMIT $3)
SELECT member.role AS "__role", (SELECT found FROM parent) AS "__parent", (SELECT COALESCE(SUM(kept_works), 0) FROM tenant_counts WHERE tenant_id = $1::uuid) AS "__count", page.*
FROM (SELECT 1) AS one LEFT JOIN member ON TRUE LEFT JOIN page ON TRUE;
-- plan:
--   Nested Loop Left Join
--     [CTE member] Bitmap Heap Scan on memberships
--       Bitmap Index Scan on memberships_tenant_id_user_id_key
--     [CTE parent] Result
--     [InitPlan 3 (returns $2)] CTE Scan on parent
--     [InitPlan 4 (returns $3)] Aggregate
--       Bitmap Heap Scan on tenant_counts
--         Bitmap Index Scan on tenant_counts_pkey
--     Nested Loop Left Join
--       Result
--       CTE Scan on member
--     Materialize
--       Limit
--         [InitPlan 5 (returns $4)] CTE Scan on member member_1
--         [InitPlan 6 (returns $5)] CTE Scan on parent parent_1
--         Result
--           Nested Loop
--             Index Scan Backward using works_pkey on works w
--             Index Scan using users_pkey on users u
-- generic plan (sent prepared):
--   Nested Loop Left Join
--     [CTE member] Index Scan using memberships_tenant_id_id_idx on memberships
--     [CTE parent] Result
--     [InitPlan 3 (returns $2)] CTE Scan on parent
--     [InitPlan 4 (returns $3)] Aggregate
--       Index Scan using tenant_counts_pkey on tenant_counts
--     Nested Loop Left Join
--       Result
--       CTE Scan on member
--     Limit
--       [InitPlan 5 (returns $4)] CTE Scan on member member_1
--       [InitPlan 6 (returns $5)] CTE Scan on parent parent_1
--       Result
--         Nested Loop
--           Index Scan Backward using works_kept_tenant_id_id_idx on works w
--           Index Scan using users_pkey on users u

-- operation: listWorks (discarded)

WITH member AS (
  SELECT role::text AS role FROM memberships WHERE tenant_id = $1::uuid AND user_id = $2::uuid),
parent AS (SELECT TRUE AS found),
page AS (
  SELECT w.id, w.slug, w.name, w.description, w.created_at AS "createdAt", w.updated_at AS "updatedAt",
                 w.discarded_at AS "discardedAt", u.email AS "ownerEmail", u.first_name AS "ownerFirstName", u.last_name AS "ownerLastName" FROM works w JOIN users u ON u.id = w.owner_id
  WHERE EXISTS (SELECT 1 FROM member) AND (SELECT found FROM parent)
    AND w.tenant_id = $1::uuid AND w.discarded_at IS NOT NULL
  ORDER BY w.id DESC LIMIT $3)
SELECT member.role AS "__role", (SELECT found FROM parent) AS "__parent", (SELECT COALESCE(SUM(discarded_works), 0) FROM tenant_counts WHERE tenant_id = $1::uuid) AS "__count", page.*
FROM (SELECT 1) AS one LEFT JOIN member ON TRUE LEFT JOIN page ON TRUE;
-- plan:
--   Nested Loop Left Join
--     [CTE member] Bitmap Heap Scan on memberships
--       Bitmap Index Scan on memberships_tenant_id_user_id_key
--     [CTE parent] Result
--     [InitPlan 3 (returns $2)] CTE Scan on parent
--     [InitPlan 4 (returns $3)] Aggregate
--       Bitmap Heap Scan on tenant_counts
--         Bitmap Index Scan on tenant_counts_pkey
--     Nested Loop Left Join
--       Result
--       CTE Scan on member
--     Materialize
--       Limit
--         [InitPlan 5 (returns $4)] CTE Scan on member member_1
--         [InitPlan 6 (returns $5)] CTE Scan on parent parent_1
--         Result
--           Nested Loop
--             Index Scan Backward using works_pkey on works w
--             Index Scan using users_pkey on users u
-- generic plan (sent prepared):
--   Nested Loop Left Join
--     [CTE member] Index Scan using memberships_tenant_id_id_idx on memberships
--     [CTE parent] Result
--     [InitPlan 3 (returns $2)] CTE Scan on parent
--     [InitPlan 4 (returns $3)] Aggregate
--       Index Scan using tenant_counts_pkey on tenant_counts
--     Nested Loop Left Join
--       Result
--       CTE Scan on member
--     Limit
--       [InitPlan 5 (returns $4)] CTE Scan on member member_1
--       [InitPlan 6 (returns $5)] CTE Scan on parent parent_1
--       Result
--         Nested Loop
--           Index Scan Backward using works_discarded_tenant_id_id_idx on works w
--           Index Scan using users_pkey on users u

-- operation: listWorks (all, 100 a page)

WITH member AS (
  SELECT role::text AS role FROM memberships WHERE tenant_id = $1::uuid AND user_id = $2::uuid),
parent AS (SELECT TRUE AS found),
page AS (
  SELECT w.id, w.slug, w.name, w.description, w.created_at AS "createdAt", w.updated_at AS "updatedAt",
                 w.discarded_at AS "discardedAt", u.email AS "ownerEmail", u.first_name AS "ownerFirstName", u.last_name AS "ownerLastName" FROM works w JOIN users u ON u.id = w.owner_id
  WHERE EXISTS (SELECT 1 FROM member) AND (SELECT found FROM parent)
    AND w.tenant_id = $1::uuid
  ORDER BY w.id DESC LIMIT $3)
SELECT member.role AS "__role", (SELECT found FROM parent) AS "__parent", (SELECT COALESCE(SUM(kept_works + discarded_works), 0) FROM tenant_counts WHERE tenant_id = $1::uuid) AS "__count", page.*
FROM (SELECT 1) AS one LEFT JOIN member ON TRUE LEFT JOIN page ON TRUE;
-- plan:
--   Nested Loop Left Join
--     [CTE member] Bitmap Heap Scan on memberships
--       Bitmap Index Scan on memberships_tenant_id_user_id_key
--     [CTE parent] Result
--     [InitPlan 3 (returns $2)] CTE Scan on parent
--     [InitPlan 4 (returns $3)] Aggregate
--       Bitmap Heap Scan on tenant_counts
--         Bitmap Index Scan on tenant_counts_pkey
--     Nested Loop Left Join
--       Result
--       CTE Scan on member
--     Materialize
--       Limit
--         [InitPlan 5 (returns $4)] CTE Scan on member member_1
--         [InitPlan 6 (returns $5)] CTE Scan on parent parent_1
--         Result
--           Nested Loop
--             Index Scan Backward using works_pkey on works w
--             Index Scan using users_pkey on users u
-- generic plan (sent prepared):
--   Nested Loop Left Join
--     [CTE member] Index Scan using memberships_tenant_id_id_idx on memberships
--     [CTE parent] Result
--     [InitPlan 3 (returns $2)] CTE Scan on parent
--     [InitPlan 4 (returns $3)] Aggregate
--       Index Scan using tenant_counts_pkey on tenant_counts
--     Nested Loop Left Join
--       Result
--       CTE Scan on member
--     Limit
--       [InitPlan 5 (returns $4)] CTE Scan on member member_1
--       [InitPlan 6 (returns $5)] CTE Scan on parent parent_1
--       Result
--         Nested Loop
--           Index Scan Backward using works_tenant_id_id_idx on works w
--           Index Scan using users_pkey on users u

-- operation: listWorks (after the 4,000th)

WITH member AS (
  SELECT role::text AS role FROM memberships WHERE tenant_id = $1::uuid AND user_id = $2::uuid),
parent AS (SELECT TRUE AS found),
page AS (
  SELECT w.id, w.slug, w.name, w.description, w.created_at AS "createdAt", w.updated_at AS "updatedAt",
                 w.discarded_at AS "discardedAt", u.email AS "ownerEmail", u.first_name AS "ownerFirstName", u.last_name AS "ownerLastName" FROM works w JOIN users u ON u.id = w.owner_id
  WHERE EXISTS (SELECT 1 FROM member) AND (SELECT found FROM parent)
    AND w.tenant_id = $1::uuid AND w.discarded_at IS NULL AND w.id < $3::uuid
  ORDER BY w.id DESC LIMIT $4)
SELECT member.role AS "__role", (SELECT found FROM parent) AS "__parent", (SELECT COALESCE(SUM(kept_works), 0) FROM tenant_counts WHERE tenant_id = $1::uuid) AS "__count", page.*
FROM (SELECT 1) AS one LEFT JOIN member ON TRUE LEFT JOIN page ON TRUE;
-- plan:
--   Nested Loop Left Join
--     [CTE member] Bitmap Heap Scan on memberships
--       Bitmap Index Scan on memberships_tenant_id_user_id_key
--     [CTE parent] Result
--     [InitPlan 3 (returns $2)] CTE Scan on parent
--     [InitPlan 4 (returns $3)] Aggregate
--       Bitmap Heap Scan on tenant_counts
--         Bitmap Index Scan on tenant_counts_pkey
--     Nested Loop Left Join
--       Result
--       CTE Scan on member
--     Materialize
--       Limit
--         [InitPlan 5 (returns $4)] CTE Scan on member member_1
--         [InitPlan 6 (returns $5)] CTE Scan on parent parent_1
--         Result
--           Nested Loop
--             Index Scan Backward using works_pkey on works w
--             Index Scan using users_pkey on users u
-- generic plan (sent prepared):
--   Nested Loop Left Join
--     [CTE member] Index Scan using memberships_tenant_id_id_idx on memberships
--     [CTE parent] Result
--     [InitPlan 3 (returns $2)] CTE Scan on parent
--     [InitPlan 4 (returns $3)] Aggregate
--       Index Scan using tenant_counts_pkey on tenant_counts
--     Nested Loop Left Join
--       Result
--       CTE Scan on member
--     Limit
--       [InitPlan 5 (returns $4)] CTE Scan on member member_1
--       [InitPlan 6 (returns $5)] CTE Scan on parent parent_1
--       Result
--         Nested Loop
--           Index Scan Backward using works_kept_tenant_id_id_idx on works w
--           Index Scan using users_pkey on users u

-- operation: listWorks (search, a rare word)

WITH member AS (
  SELECT role::text AS role FROM memberships WHERE tenant_id = $1::uuid AND user_id = $2::uuid),
parent AS (SELECT TRUE AS found),
glance AS (
  SELECT w.id FROM (SELECT w.id AS id, w.search_prefixes, w.search FROM works w
  WHERE w.tenant_id = $1::uuid AND w.discarded_at IS NULL AND EXISTS (SELECT 1 FROM member) AND (SELECT found FROM parent) ORDER BY w.id DESC LIMIT 300) AS w WHERE w.search_prefixes @> $3::text[] LIMIT $4),
walked AS (
  SELECT w.id FROM (SELECT w.id AS id, w.search_prefixes, w.search FROM works w
  WHERE w.tenant_id = $1::uuid AND w.discarded_at IS NULL AND EXISTS (SELECT 1 FROM member) AND (SELECT found FROM parent) ORDER BY w.id DESC LIMIT 2000) AS w
  WHERE (SELECT count(*) FROM glance) > 0 AND w.search_prefixes @> $3::text[] LIMIT $4),
searched AS MATERIALIZED (
  SELECT w.id AS id FROM works w
  WHERE EXISTS (SELECT 1 FROM member) AND (SELECT found FROM parent) AND w.tenant_id = $1::uuid AND w.discarded_at IS NULL AND w.search_prefixes @> $3::text[]
  ORDER BY w.id::text COLLATE "C" DESC LIMIT $4),
page AS (
  SELECT w.id, w.slug, w.name, w.description, w.created_at AS "createdAt", w.updated_at AS "updatedAt",
                 w.discarded_at AS "discardedAt", u.email AS "ownerEmail", u.first_name AS "ownerFirstName", u.last_name AS "ownerLastName" FROM works w JOIN users u ON u.id = w.owner_id
  WHERE w.id IN (SELECT id FROM walked WHERE (SELECT count(*) FROM walked) = $4
                   UNION ALL SELECT id FROM searched WHERE (SELECT count(*) FROM walked) < $4)
  ORDER BY w.id DESC)
SELECT member.role AS "__role", (SELECT found FROM parent) AS "__parent", CASE WHEN (SELECT count(*) FROM page) = $4 THEN CASE
  WHEN (SELECT count(*) FROM glance) = $4
   AND (SELECT count(*) FROM (SELECT 1 FROM (SELECT w.id AS id, w.search_prefixes, w.search FROM works w
  WHERE w.tenant_id = $1::uuid AND w.discarded_at IS NULL ORDER BY w.id DESC LIMIT 2000) AS w WHERE w.search_prefixes @> $3::text[] LIMIT $5) AS walk)
       = $5 THEN $5::int
  ELSE (SELECT count(*)::int FROM (SELECT 1 FROM works w WHERE w.tenant_id = $1::uuid AND w.discarded_at IS NULL AND w.search_prefixes @> $3::text[] LIMIT $5) AS counted)
END END AS "__count", page.*
FROM (SELECT 1) AS one LEFT JOIN member ON TRUE LEFT JOIN page ON TRUE;
-- plan:
--   Nested Loop Left Join
--     [CTE member] Bitmap Heap Scan on memberships
--       Bitmap Index Scan on memberships_tenant_id_user_id_key
--     [CTE parent] Result
--     [CTE glance] Limit
--       Subquery Scan on w
--         Limit
--           [InitPlan 3 (returns $2)] CTE Scan on member member_1
--           [InitPlan 4 (returns $3)] CTE Scan on parent
--           Result
--             Index Scan Backward using works_pkey on works w_1
--     [CTE walked] Limit
--       [InitPlan 6 (returns $5)] Aggregate
--         CTE Scan on glance
--       Result
--         Subquery Scan on w_2
--           Limit
--             [InitPlan 7 (returns $6)] CTE Scan on member member_2
--             [InitPlan 8 (returns $7)] CTE Scan on parent parent_1
--             Result
--               Index Scan Backward using works_pkey on works w_3
--     [CTE searched] Limit
--       [InitPlan 10 (returns $9)] CTE Scan on member member_3
--       [InitPlan 11 (returns $10)] CTE Scan on parent parent_2
--       Sort
--         Result
--           Bitmap Heap Scan on works w_4
--             Bitmap Index Scan on works_search_idx
--     [CTE page] Sort
--       Nested Loop
--         Nested Loop
--           Unique
--             Sort
--               Append
--                 Result
--                   [InitPlan 13 (returns $12)] Aggregate
--                     CTE Scan on walked
--                   CTE Scan on walked walked_2
--                 Result
--                   [InitPlan 14 (returns $13)] Aggregate
--                     CTE Scan on walked walked_1
--                   CTE Scan on searched
--           Index Scan using works_pkey on works w_5
--         Index Scan using users_pkey on users u
--     [InitPlan 16 (returns $17)] CTE Scan on parent parent_3
--     [InitPlan 17 (returns $18)] Aggregate
--       CTE Scan on page page_1
--     [InitPlan 18 (returns $19)] Aggregate
--       CTE Scan on glance glance_1
--     [InitPlan 19 (returns $20)] Aggregate
--       Limit
--         Subquery Scan on w_6
--           Limit
--             Index Scan Backward using works_pkey on works w_7
--     [InitPlan 20 (returns $21)] Aggregate
--       Limit
--         Bitmap Heap Scan on works w_8
--           Bitmap Index Scan on works_search_idx
--     Nested Loop Left Join
--       Result
--       CTE Scan on member
--     CTE Scan on page
-- generic plan (sent prepared):
--   Nested Loop Left Join
--     [CTE member] Index Scan using memberships_tenant_id_id_idx on memberships
--     [CTE parent] Result
--     [CTE glance] Limit
--       Subquery Scan on w
--         Limit
--           [InitPlan 3 (returns $2)] CTE Scan on member member_1
--           [InitPlan 4 (returns $3)] CTE Scan on parent
--           Result
--             Index Scan Backward using works_kept_tenant_id_id_idx on works w_1
--     [CTE walked] Limit
--       [InitPlan 6 (returns $5)] Aggregate
--         CTE Scan on glance
--       Result
--         Subquery Scan on w_2
--           Limit
--             [InitPlan 7 (returns $6)] CTE Scan on member member_2
--             [InitPlan 8 (returns $7)] CTE Scan on parent parent_1
--             Result
--               Index Scan Backward using works_kept_tenant_id_id_idx on works w_3
--     [CTE searched] Limit
--       [InitPlan 10 (returns $9)] CTE Scan on member member_3
--       [InitPlan 11 (returns $10)] CTE Scan on parent parent_2
--       Sort
--         Result
--           Bitmap Heap Scan on works w_4
--             Bitmap Index Scan on works_search_idx
--     [CTE page] Sort
--       Nested Loop
--         Nested Loop
--           Unique
--             Sort
--               Append
--                 Result
--                   [InitPlan 13 (returns $12)] Aggregate
--                     CTE Scan on walked
--                   CTE Scan on walked walked_2
--                 Result
--                   [InitPlan 14 (returns $13)] Aggregate
--                     CTE Scan on walked walked_1
--                   CTE Scan on searched
--           Index Scan using works_pkey on works w_5
--         Index Scan using users_pkey on users u
--     [InitPlan 16 (returns $17)] CTE Scan on parent parent_3
--     [InitPlan 17 (returns $18)] Aggregate
--       CTE Scan on page page_1
--     [InitPlan 18 (returns $19)] Aggregate
--       CTE Scan on glance glance_1
--     [InitPlan 19 (returns $20)] Aggregate
--       Limit
--         Subquery Scan on w_6
--           Limit
--             Index Scan Backward using works_kept_tenant_id_id_idx on works w_7
--     [InitPlan 20 (returns $21)] Aggregate
--       Limit
--         Bitmap Heap Scan on works w_8
--           Bitmap Index Scan on works_search_idx
--     Nested Loop Left Join
--       Result
--       CTE Scan on member
--     CTE Scan on page

-- operation: listWorks (search, a word every work has)

WITH member AS (
  SELECT role::text AS role FROM memberships WHERE tenant_id = $1::uuid AND user_id = $2::uuid),
parent AS (SELECT TRUE AS found),
glance AS (
  SELECT w.id FROM (SELECT w.id AS id, w.search_prefixes, w.search FROM works w
  WHERE w.tenant_id = $1::uuid AND w.discarded_at IS NULL AND EXISTS (SELECT 1 FROM member) AND (SELECT found FROM parent) ORDER BY w.id DESC LIMIT 300) AS w WHERE w.search_prefixes @> $3::text[] LIMIT $4),
walked AS (
  SELECT w.id FROM (SELECT w.id AS id, w.search_prefixes, w.search FROM works w
  WHERE w.tenant_id = $1::uuid AND w.discarded_at IS NULL AND EXISTS (SELECT 1 FROM member) AND (SELECT found FROM parent) ORDER BY w.id DESC LIMIT 2000) AS w
  WHERE (SELECT count(*) FROM glance) > 0 AND w.search_prefixes @> $3::text[] LIMIT $4),
searched AS MATERIALIZED (
  SELECT w.id AS id FROM works w
  WHERE EXISTS (SELECT 1 FROM member) AND (SELECT found FROM parent) AND w.tenant_id = $1::uuid AND w.discarded_at IS NULL AND w.search_prefixes @> $3::text[]
  ORDER BY w.id::text COLLATE "C" DESC LIMIT $4),
page AS (
  SELECT w.id, w.slug, w.name, w.description, w.created_at AS "createdAt", w.updated_at AS "updatedAt",
                 w.discarded_at AS "discardedAt", u.email AS "ownerEmail", u.first_name AS "ownerFirstName", u.last_name AS "ownerLastName" FROM works w JOIN users u ON u.id = w.owner_id
  WHERE w.id IN (SELECT id FROM walked WHERE (SELECT count(*) FROM walked) = $4
                   UNION ALL SELECT id FROM searched WHERE (SELECT count(*) FROM walked) < $4)
  ORDER BY w.id DESC)
SELECT member.role AS "__role", (SELECT found FROM parent) AS "__parent", CASE WHEN (SELECT count(*) FROM page) = $4 THEN CASE
  WHEN (SELECT count(*) FROM glance) = $4
   AND (SELECT count(*) FROM (SELECT 1 FROM (SELECT w.id AS id, w.search_prefixes, w.search FROM works w
  WHERE w.tenant_id = $1::uuid AND w.discarded_at IS NULL ORDER BY w.id DESC LIMIT 2000) AS w WHERE w.search_prefixes @> $3::text[] LIMIT $5) AS walk)
       = $5 THEN $5::int
  ELSE (SELECT count(*)::int FROM (SELECT 1 FROM works w WHERE w.tenant_id = $1::uuid AND w.discarded_at IS NULL AND w.search_prefixes @> $3::text[] LIMIT $5) AS counted)
END END AS "__count", page.*
FROM (SELECT 1) AS one LEFT JOIN member ON TRUE LEFT JOIN page ON TRUE;
-- plan:
--   Nested Loop Left Join
--     [CTE member] Bitmap Heap Scan on memberships
--       Bitmap Index Scan on memberships_tenant_id_user_id_key
--     [CTE parent] Result
--     [CTE glance] Limit
--       Subquery Scan on w
--         Limit
--           [InitPlan 3 (returns $2)] CTE Scan on member member_1
--           [InitPlan 4 (returns $3)] CTE Scan on parent
--           Result
--             Index Scan Backward using works_pkey on works w_1
--     [CTE walked] Limit
--       [InitPlan 6 (returns $5)] Aggregate
--         CTE Scan on glance
--       Result
--         Subquery Scan on w_2
--           Limit
--             [InitPlan 7 (returns $6)] CTE Scan on member member_2
--             [InitPlan 8 (returns $7)] CTE Scan on parent parent_1
--             Result
--               Index Scan Backward using works_pkey on works w_3
--     [CTE searched] Limit
--       [InitPlan 10 (returns $9)] CTE Scan on member member_3
--       [InitPlan 11 (returns $10)] CTE Scan on parent parent_2
--       Sort
--         Result
--           Seq Scan on works w_4
--     [CTE page] Sort
--       Nested Loop
--         Nested Loop
--           HashAggregate
--             Append
--               Result
--                 [InitPlan 13 (returns $12)] Aggregate
--                   CTE Scan on walked
--                 CTE Scan on walked walked_2
--               Result
--                 [InitPlan 14 (returns $13)] Aggregate
--                   CTE Scan on walked walked_1
--                 CTE Scan on searched
--           Index Scan using works_pkey on works w_5
--         Memoize
--           Index Scan using users_pkey on users u
--     [InitPlan 16 (returns $17)] CTE Scan on parent parent_3
--     [InitPlan 17 (returns $18)] Aggregate
--       CTE Scan on page page_1
--     [InitPlan 18 (returns $19)] Aggregate
--       CTE Scan on glance glance_1
--     [InitPlan 19 (returns $20)] Aggregate
--       Limit
--         Subquery Scan on w_6
--           Limit
--             Index Scan Backward using works_pkey on works w_7
--     [InitPlan 20 (returns $21)] Aggregate
--       Limit
--         Seq Scan on works w_8
--     Nested Loop Left Join
--       Result
--       CTE Scan on member
--     CTE Scan on page
-- generic plan (sent prepared):
--   Nested Loop Left Join
--     [CTE member] Index Scan using memberships_tenant_id_id_idx on memberships
--     [CTE parent] Result
--     [CTE glance] Limit
--       Subquery Scan on w
--         Limit
--           [InitPlan 3 (returns $2)] CTE Scan on member member_1
--           [InitPlan 4 (returns $3)] CTE Scan on parent
--           Result
--             Index Scan Backward using works_kept_tenant_id_id_idx on works w_1
--     [CTE walked] Limit
--       [InitPlan 6 (returns $5)] Aggregate
--         CTE Scan on glance
--       Result
--         Subquery Scan on w_2
--           Limit
--             [InitPlan 7 (returns $6)] CTE Scan on member member_2
--             [InitPlan 8 (returns $7)] CTE Scan on parent parent_1
--             Result
--               Index Scan Backward using works_kept_tenant_id_id_idx on works w_3
--     [CTE searched] Limit
--       [InitPlan 10 (returns $9)] CTE Scan on member member_3
--       [InitPlan 11 (returns $10)] CTE Scan on parent parent_2
--       Sort
--         Result
--           Bitmap Heap Scan on works w_4
--             Bitmap Index Scan on works_search_idx
--     [CTE page] Sort
--       Nested Loop
--         Nested Loop
--           Unique
--             Sort
--               Append
--                 Result
--                   [InitPlan 13 (returns $12)] Aggregate
--                     CTE Scan on walked
--                   CTE Scan on walked walked_2
--                 Result
--                   [InitPlan 14 (returns $13)] Aggregate
--                     CTE Scan on walked walked_1
--                   CTE Scan on searched
--           Index Scan using works_pkey on works w_5
--         Index Scan using users_pkey on users u
--     [InitPlan 16 (returns $17)] CTE Scan on parent parent_3
--     [InitPlan 17 (returns $18)] Aggregate
--       CTE Scan on page page_1
--     [InitPlan 18 (returns $19)] Aggregate
--       CTE Scan on glance glance_1
--     [InitPlan 19 (returns $20)] Aggregate
--       Limit
--         Subquery Scan on w_6
--           Limit
--             Index Scan Backward using works_kept_tenant_id_id_idx on works w_7
--     [InitPlan 20 (returns $21)] Aggregate
--       Limit
--         Bitmap Heap Scan on works w_8
--           Bitmap Index Scan on works_search_idx
--     Nested Loop Left Join
--       Result
--       CTE Scan on member
--     CTE Scan on page

-- operation: listWorks (search, all)

WITH member AS (
  SELECT role::text AS role FROM memberships WHERE tenant_id = $1::uuid AND user_id = $2::uuid),
parent AS (SELECT TRUE AS found),
glance AS (
  SELECT w.id FROM (SELECT w.id AS id, w.search_prefixes, w.search FROM works w
  WHERE w.tenant_id = $1::uuid AND EXISTS (SELECT 1 FROM member) AND (SELECT found FROM parent) ORDER BY w.id DESC LIMIT 300) AS w WHERE w.search_prefixes @> $3::text[] LIMIT $4),
walked AS (
  SELECT w.id FROM (SELECT w.id AS id, w.search_prefixes, w.search FROM works w
  WHERE w.tenant_id = $1::uuid AND EXISTS (SELECT 1 FROM member) AND (SELECT found FROM parent) ORDER BY w.id DESC LIMIT 2000) AS w
  WHERE (SELECT count(*) FROM glance) > 0 AND w.search_prefixes @> $3::text[] LIMIT $4),
searched AS MATERIALIZED (
  SELECT w.id AS id FROM works w
  WHERE EXISTS (SELECT 1 FROM member) AND (SELECT found FROM parent) AND w.tenant_id = $1::uuid AND w.search_prefixes @> $3::text[]
  ORDER BY w.id::text COLLATE "C" DESC LIMIT $4),
page AS (
  SELECT w.id, w.slug, w.name, w.description, w.created_at AS "createdAt", w.updated_at AS "updatedAt",
                 w.discarded_at AS "discardedAt", u.email AS "ownerEmail", u.first_name AS "ownerFirstName", u.last_name AS "ownerLastName" FROM works w JOIN users u ON u.id = w.owner_id
  WHERE w.id IN (SELECT id FROM walked WHERE (SELECT count(*) FROM walked) = $4
                   UNION ALL SELECT id FROM searched WHERE (SELECT count(*) FROM walked) < $4)
  ORDER BY w.id DESC)
SELECT member.role AS "__role", (SELECT found FROM parent) AS "__parent", CASE WHEN (SELECT count(*) FROM page) = $4 THEN CASE
  WHEN (SELECT count(*) FROM glance) = $4
   AND (SELECT count(*) FROM (SELECT 1 FROM (SELECT w.id AS id, w.search_prefixes, w.search FROM works w
  WHERE w.tenant_id = $1::uuid ORDER BY w.id DESC LIMIT 2000) AS w WHERE w.search_prefixes @> $3::text[] LIMIT $5) AS walk)
       = $5 THEN $5::int
  ELSE (SELECT count(*)::int FROM (SELECT 1 FROM works w WHERE w.tenant_id = $1::uuid AND w.search_prefixes @> $3::text[] LIMIT $5) AS counted)
END END AS "__count", page.*
FROM (SELECT 1) AS one LEFT JOIN member ON TRUE LEFT JOIN page ON TRUE;
-- plan:
--   Nested Loop Left Join
--     [CTE member] Bitmap Heap Scan on memberships
--       Bitmap Index Scan on memberships_tenant_id_user_id_key
--     [CTE parent] Result
--     [CTE glance] Limit
--       Subquery Scan on w
--         Limit
--           [InitPlan 3 (returns $2)] CTE Scan on member member_1
--           [InitPlan 4 (returns $3)] CTE Scan on parent
--           Result
--             Index Scan Backward using works_pkey on works w_1
--     [CTE walked] Limit
--       [InitPlan 6 (returns $5)] Aggregate
--         CTE Scan on glance
--       Result
--         Subquery Scan on w_2
--           Limit
--             [InitPlan 7 (returns $6)] CTE Scan on member member_2
--             [InitPlan 8 (returns $7)] CTE Scan on parent parent_1
--             Result
--               Index Scan Backward using works_pkey on works w_3
--     [CTE searched] Limit
--       [InitPlan 10 (returns $9)] CTE Scan on member member_3
--       [InitPlan 11 (returns $10)] CTE Scan on parent parent_2
--       Sort
--         Result
--           Bitmap Heap Scan on works w_4
--             Bitmap Index Scan on works_search_idx
--     [CTE page] Sort
--       Nested Loop
--         Nested Loop
--           Unique
--             Sort
--               Append
--                 Result
--                   [InitPlan 13 (returns $12)] Aggregate
--                     CTE Scan on walked
--                   CTE Scan on walked walked_2
--                 Result
--                   [InitPlan 14 (returns $13)] Aggregate
--                     CTE Scan on walked walked_1
--                   CTE Scan on searched
--           Index Scan using works_pkey on works w_5
--         Index Scan using users_pkey on users u
--     [InitPlan 16 (returns $17)] CTE Scan on parent parent_3
--     [InitPlan 17 (returns $18)] Aggregate
--       CTE Scan on page page_1
--     [InitPlan 18 (returns $19)] Aggregate
--       CTE Scan on glance glance_1
--     [InitPlan 19 (returns $20)] Aggregate
--       Limit
--         Subquery Scan on w_6
--           Limit
--             Index Scan Backward using works_pkey on works w_7
--     [InitPlan 20 (returns $21)] Aggregate
--       Limit
--         Bitmap Heap Scan on works w_8
--           Bitmap Index Scan on works_search_idx
--     Nested Loop Left Join
--       Result
--       CTE Scan on member
--     CTE Scan on page
-- generic plan (sent prepared):
--   Nested Loop Left Join
--     [CTE member] Index Scan using memberships_tenant_id_id_idx on memberships
--     [CTE parent] Result
--     [CTE glance] Limit
--       Subquery Scan on w
--         Limit
--           [InitPlan 3 (returns $2)] CTE Scan on member member_1
--           [InitPlan 4 (returns $3)] CTE Scan on parent
--           Result
--             Index Scan Backward using works_tenant_id_id_idx on works w_1
--     [CTE walked] Limit
--       [InitPlan 6 (returns $5)] Aggregate
--         CTE Scan on glance
--       Result
--         Subquery Scan on w_2
--           Limit
--             [InitPlan 7 (returns $6)] CTE Scan on member member_2
--             [InitPlan 8 (returns $7)] CTE Scan on parent parent_1
--             Result
--               Index Scan Backward using works_tenant_id_id_idx on works w_3
--     [CTE searched] Limit
--       [InitPlan 10 (returns $9)] CTE Scan on member member_3
--       [InitPlan 11 (returns $10)] CTE Scan on parent parent_2
--       Sort
--         Result
--           Bitmap Heap Scan on works w_4
--             Bitmap Index Scan on works_search_idx
--     [CTE page] Sort
--       Nested Loop
--         Nested Loop
--           Unique
--             Sort
--               Append
--                 Result
--                   [InitPlan 13 (returns $12)] Aggregate
--                     CTE Scan on walked
--                   CTE Scan on walked walked_2
--                 Result
--                   [InitPlan 14 (returns $13)] Aggregate
--                     CTE Scan on walked walked_1
--                   CTE Scan on searched
--           Index Scan using works_pkey on works w_5
--         Index Scan using users_pkey on users u
--     [InitPlan 16 (returns $17)] CTE Scan on parent parent_3
--     [InitPlan 17 (returns $18)] Aggregate
--       CTE Scan on page page_1
--     [InitPlan 18 (returns $19)] Aggregate
--       CTE Scan on glance glance_1
--     [InitPlan 19 (returns $20)] Aggregate
--       Limit
--         Subquery Scan on w_6
--           Limit
--             Index Scan Backward using works_tenant_id_id_idx on works w_7
--     [InitPlan 20 (returns $21)] Aggregate
--       Limit
--         Bitmap Heap Scan on works w_8
--           Bitmap Index Scan on works_search_idx
--     Nested Loop Left Join
--       Result
--       CTE Scan on member
--     CTE Scan on page

-- operation: listWorks (search, a long word)

WITH member AS (
  SELECT role::text AS role FROM memberships WHERE tenant_id = $1::uuid AND user_id = $2::uuid),
parent AS (SELECT TRUE AS found),
glance AS (
  SELECT w.id FROM (SELECT w.id AS id, w.search_prefixes, w.search FROM works w
  WHERE w.tenant_id = $1::uuid AND w.discarded_at IS NULL AND EXISTS (SELECT 1 FROM member) AND (SELECT found FROM parent) ORDER BY w.id DESC LIMIT 300) AS w WHERE w.search_prefixes @> $3::text[] AND w.search LIKE $4 LIMIT $5),
walked AS (
  SELECT w.id FROM (SELECT w.id AS id, w.search_prefixes, w.search FROM works w
  WHERE w.tenant_id = $1::uuid AND w.discarded_at IS NULL AND EXISTS (SELECT 1 FROM member) AND (SELECT found FROM parent) ORDER BY w.id DESC LIMIT 2000) AS w
  WHERE (SELECT count(*) FROM glance) > 0 AND w.search_prefixes @> $3::text[] AND w.search LIKE $4 LIMIT $5),
searched AS MATERIALIZED (
  SELECT w.id AS id FROM works w
  WHERE EXISTS (SELECT 1 FROM member) AND (SELECT found FROM parent) AND w.tenant_id = $1::uuid AND w.discarded_at IS NULL AND w.search_prefixes @> $3::text[] AND w.search LIKE $4
  ORDER BY w.id::text COLLATE "C" DESC LIMIT $5),
page AS (
  SELECT w.id, w.slug, w.name, w.description, w.created_at AS "createdAt", w.updated_at AS "updatedAt",
                 w.discarded_at AS "discardedAt", u.email AS "ownerEmail", u.first_name AS "ownerFirstName", u.last_name AS "ownerLastName" FROM works w JOIN users u ON u.id = w.owner_id
  WHERE w.id IN (SELECT id FROM walked WHERE (SELECT count(*) FROM walked) = $5
                   UNION ALL SELECT id FROM searched WHERE (SELECT count(*) FROM walked) < $5)
  ORDER BY w.id DESC)
SELECT member.role AS "__role", (SELECT found FROM parent) AS "__parent", CASE WHEN (SELECT count(*) FROM page) = $5 THEN CASE
  WHEN (SELECT count(*) FROM glance) = $5
   AND (SELECT count(*) FROM (SELECT 1 FROM (SELECT w.id AS id, w.search_prefixes, w.search FROM works w
  WHERE w.tenant_id = $1::uuid AND w.discarded_at IS NULL ORDER BY w.id DESC LIMIT 2000) AS w WHERE w.search_prefixes @> $3::text[] AND w.search LIKE $4 LIMIT $6) AS walk)
       = $6 THEN $6::int
  ELSE (SELECT count(*)::int FROM (SELECT 1 FROM works w WHERE w.tenant_id = $1::uuid AND w.discarded_at IS NULL AND w.search_prefixes @> $3::text[] AND w.search LIKE $4 LIMIT $6) AS counted)
END END AS "__count", page.*
FROM (SELECT 1) AS one LEFT JOIN member ON TRUE LEFT JOIN page ON TRUE;
-- plan:
--   Nested Loop Left Join
--     [CTE member] Bitmap Heap Scan on memberships
--       Bitmap Index Scan on memberships_tenant_id_user_id_key
--     [CTE parent] Result
--     [CTE glance] Limit
--       Subquery Scan on w
--         Limit
--           [InitPlan 3 (returns $2)] CTE Scan on member member_1
--           [InitPlan 4 (returns $3)] CTE Scan on parent
--           Result
--             Index Scan Backward using works_pkey on works w_1
--     [CTE walked] Limit
--       [InitPlan 6 (returns $5)] Aggregate
--         CTE Scan on glance
--       Result
--         Subquery Scan on w_2
--           Limit
--             [InitPlan 7 (returns $6)] CTE Scan on member member_2
--             [InitPlan 8 (returns $7)] CTE Scan on parent parent_1
--             Result
--               Index Scan Backward using works_pkey on works w_3
--     [CTE searched] Limit
--       [InitPlan 10 (returns $9)] CTE Scan on member member_3
--       [InitPlan 11 (returns $10)] CTE Scan on parent parent_2
--       Sort
--         Result
--           Bitmap Heap Scan on works w_4
--             Bitmap Index Scan on works_search_idx
--     [CTE page] Sort
--       Nested Loop
--         Nested Loop
--           Unique
--             Sort
--               Append
--                 Result
--                   [InitPlan 13 (returns $12)] Aggregate
--                     CTE Scan on walked
--                   CTE Scan on walked walked_2
--                 Result
--                   [InitPlan 14 (returns $13)] Aggregate
--                     CTE Scan on walked walked_1
--                   CTE Scan on searched
--           Index Scan using works_pkey on works w_5
--         Index Scan using users_pkey on users u
--     [InitPlan 16 (returns $17)] CTE Scan on parent parent_3
--     [InitPlan 17 (returns $18)] Aggregate
--       CTE Scan on page page_1
--     [InitPlan 18 (returns $19)] Aggregate
--       CTE Scan on glance glance_1
--     [InitPlan 19 (returns $20)] Aggregate
--       Limit
--         Subquery Scan on w_6
--           Limit
--             Index Scan Backward using works_pkey on works w_7
--     [InitPlan 20 (returns $21)] Aggregate
--       Limit
--         Bitmap Heap Scan on works w_8
--           Bitmap Index Scan on works_search_idx
--     Nested Loop Left Join
--       Result
--       CTE Scan on member
--     CTE Scan on page
-- generic plan (sent prepared):
--   Nested Loop Left Join
--     [CTE member] Index Scan using memberships_tenant_id_id_idx on memberships
--     [CTE parent] Result
--     [CTE glance] Limit
--       Subquery Scan on w
--         Limit
--           [InitPlan 3 (returns $2)] CTE Scan on member member_1
--           [InitPlan 4 (returns $3)] CTE Scan on parent
--           Result
--             Index Scan Backward using works_kept_tenant_id_id_idx on works w_1
--     [CTE walked] Limit
--       [InitPlan 6 (returns $5)] Aggregate
--         CTE Scan on glance
--       Result
--         Subquery Scan on w_2
--           Limit
--             [InitPlan 7 (returns $6)] CTE Scan on member member_2
--             [InitPlan 8 (returns $7)] CTE Scan on parent parent_1
--             Result
--               Index Scan Backward using works_kept_tenant_id_id_idx on works w_3
--     [CTE searched] Limit
--       [InitPlan 10 (returns $9)] CTE Scan on member member_3
--       [InitPlan 11 (returns $10)] CTE Scan on parent parent_2
--       Sort
--         Result
--           Bitmap Heap Scan on works w_4
--             Bitmap Index Scan on works_search_idx
--     [CTE page] Sort
--       Nested Loop
--         Nested Loop
--           Unique
--             Sort
--               Append
--                 Result
--                   [InitPlan 13 (returns $12)] Aggregate
--                     CTE Scan on walked
--                   CTE Scan on walked walked_2
--                 Result
--                   [InitPlan 14 (returns $13)] Aggregate
--                     CTE Scan on walked walked_1
--                   CTE Scan on searched
--           Index Scan using works_pkey on works w_5
--         Index Scan using users_pkey on users u
--     [InitPlan 16 (returns $17)] CTE Scan on parent parent_3
--     [InitPlan 17 (returns $18)] Aggregate
--       CTE Scan on page page_1
--     [InitPlan 18 (returns $19)] Aggregate
--       CTE Scan on glance glance_1
--     [InitPlan 19 (returns $20)] Aggregate
--       Limit
--         Subquery Scan on w_6
--           Limit
--             Index Scan Backward using works_kept_tenant_id_id_idx on works w_7
--     [InitPlan 20 (returns $21)] Aggregate
--       Limit
--         Bitmap Heap Scan on works w_8
--           Bitmap Index Scan on works_search_idx
--     Nested Loop Left Join
--       Result
--       CTE Scan on member
--     CTE Scan on page
