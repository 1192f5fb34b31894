-- Written by packages/server/test/integration/statement-plans.test.ts: the statements each operation sends
-- (in text order), with the shape of their plans on PostgreSQL. UPDATE_STATEMENT_PLANS=1 rewrites the file
-- (docs/development.md).

-- operation: listMembers (the big tenant)

SELECT "t0"."id", "t0"."tenant_id" AS "tenantId", "t0"."user_id" AS "userId", "t0"."role"::text, "t0"."created_at" AS "createdAt", "Membership_user"."__prisma_data__" AS "user" FROM "public"."memberships" AS "t0" LEFT JOIN LATERAL (SELECT JSONB_BUILD_OBJECT('id', "t1"."id", 'email', "t1"."email", 'firstName', "t1"."first_name", 'lastName', "t1"."last_name") AS "__prisma_data__" FROM "public"."users" AS "t1" WHERE "t0"."user_id" = "t1"."id" LIMIT $1) AS "Membership_user" ON true WHERE "t0"."tenant_id" = $2 ORDER BY "t0"."id" DESC LIMIT $3;
-- plan:
--   Limit
--     Nested Loop Left Join
--       Index Scan Backward using memberships_tenant_id_id_idx on memberships t0
--       Memoize
--         Limit
--           Seq Scan on users t1

SELECT COALESCE(SUM(members), 0) AS "members", COALESCE(SUM(webhook_endpoints), 0) AS "webhookEndpoints" FROM tenant_counts WHERE tenant_id = $1::uuid;
-- plan:
--   Aggregate
--     Bitmap Heap Scan on tenant_counts
--       Bitmap Index Scan on tenant_counts_pkey
-- generic plan (sent prepared):
--   Aggregate
--     Index Scan using tenant_counts_pkey on tenant_counts

SELECT role::text AS role FROM memberships WHERE tenant_id = $1::uuid AND user_id = $2::uuid;
-- plan:
--   Bitmap Heap Scan on memberships
--     Bitmap Index Scan on memberships_tenant_id_user_id_key
-- generic plan (sent prepared):
--   Index Scan using memberships_tenant_id_id_idx on memberships
