-- Written by packages/server/test/integration/statement-plans.test.ts: the statements each operation sends
-- (in text order), with the shape of their plans on PostgreSQL. UPDATE_STATEMENT_PLANS=1 rewrites the file
-- (docs/development.md).

-- operation: listTenants (first page)

SELECT "t0"."id", "t0"."tenant_id" AS "tenantId", "Membership_tenant"."__prisma_data__" AS "tenant" FROM "public"."memberships" AS "t0" LEFT JOIN LATERAL (SELECT JSONB_BUILD_OBJECT('id', "t1"."id", 'name', "t1"."name", 'slug', "t1"."slug", 'ownerId', "t1"."owner_id", 'createdAt', "t1"."created_at", 'updatedAt', "t1"."updated_at", 'ownerId', "t1"."owner_id", 'owner', "Tenant_owner"."__prisma_data__", 'memberships', "Tenant_memberships"."__prisma_data__", 'works', "Tenant_works"."__prisma_data__", 'counts', "Tenant_counts"."__prisma_data__") AS "__prisma_data__" FROM "public"."tenants" AS "t1" LEFT JOIN LATERAL (SELECT JSONB_BUILD_OBJECT('firstName', "t2"."first_name", 'lastName', "t2"."last_name", 'email', "t2"."email") AS "__prisma_data__" FROM "public"."users" AS "t2" WHERE "t1"."owner_id" = "t2"."id" LIMIT $1) AS "Tenant_owner" ON true LEFT JOIN LATERAL (SELECT COALESCE(JSONB_AGG("__prisma_data__"), '[]') AS "__prisma_data__" FROM (SELECT "t5"."__prisma_data__" FROM (SELECT JSONB_BUILD_OBJECT('role', "t4"."role", 'userId', "t4"."user_id", 'user', "Membership_user"."__prisma_data__") AS "__prisma_data__", "t4"."id", "t4"."user_id" FROM (SELECT "t3".* FROM "public"."memberships" AS "t3" WHERE "t1"."id" = "t3"."tenant_id" /* root select */) AS "t4" LEFT JOIN LATERAL (SELECT JSONB_BUILD_OBJECT('firstName', "t7"."first_name", 'lastName', "t7"."last_name", 'email', "t7"."email") AS "__prisma_data__" FROM "public"."users" AS "t7" WHERE "t4"."user_id" = "t7"."id" LIMIT $2) AS "Membership_user" ON true /* inner select */) AS "t5" ORDER BY "t5"."id" ASC LIMIT $3 /* middle select */) AS "t6" /* outer select */) AS "Tenant_memberships" ON true LEFT JOIN LATERAL (SELECT COALESCE(JSONB_AGG("__prisma_data__"), '[]') AS "__prisma_data__" FROM (SELECT "t10"."__prisma_data__" FROM (SELECT JSONB_BUILD_OBJECT('id', "t9"."id", 'tenantId', "t9"."tenant_id", 'slug', "t9"."slug", 'name', "t9"."name", 'description', "t9"."description", 'ownerId', "t9"."owner_id", 'createdAt', "t9"."created_at", 'updatedAt', "t9"."updated_at", 'discardedAt', "t9"."discarded_at", 'search', "t9"."search", 'ownerId', "t9"."owner_id", 'owner', "Work_owner"."__prisma_data__") AS "__prisma_data__", "t9"."id", "t9"."discarded_at", "t9"."owner_id" FROM (SELECT "t8".* FROM "public"."works" AS "t8" WHERE "t1"."id" = "t8"."tenant_id" /* root select */) AS "t9" LEFT JOIN LATERAL (SELECT JSONB_BUILD_OBJECT('firstName', "t12"."first_name", 'lastName', "t12"."last_name", 'email', "t12"."email") AS "__prisma_data__" FROM "public"."users" AS "t12" WHERE "t9"."owner_id" = "t12"."id" LIMIT $4) AS "Work_owner" ON true /* inner select */) AS "t10" WHERE "t10"."discarded_at" IS NULL ORDER BY "t10"."id" DESC LIMIT $5 /* middle select */) AS "t11" /* outer select */) AS "Tenant_works" ON true LEFT JOIN LATERAL (SELECT COALESCE(JSONB_AGG("__prisma_data__"), '[]') AS "__prisma_data__" FROM (SELECT "t15"."__prisma_data__" FROM (SELECT JSONB_BUILD_OBJECT('keptWorks', "t14"."kept_works") AS "__prisma_data__" FROM (SELECT "t13".* FROM "public"."tenant_counts" AS "t13" WHERE "t1"."id" = "t13"."tenant_id" /* root select */) AS "t14" /* inner select */) AS "t15" /* middle select */) AS "t16" /* outer select */) AS "Tenant_counts" ON true WHERE "t0"."tenant_id" = "t1"."id" LIMIT $6) AS "Membership_tenant" ON true WHERE "t0"."user_id" = $7 ORDER BY "t0"."tenant_id" DESC LIMIT $8;
-- plan:
--   Limit
--     Nested Loop Left Join
--       Index Scan Backward using memberships_user_id_tenant_id_idx on memberships t0
--       Limit
--         Nested Loop Left Join
--           Nested Loop Left Join
--             Nested Loop Left Join
--               Nested Loop Left Join
--                 Index Scan using tenants_pkey on tenants t1
--                 Limit
--                   Seq Scan on users t2
--               Aggregate
--                 Limit
--                   Nested Loop Left Join
--                     Index Scan using memberships_tenant_id_id_idx on memberships t3
--                     Limit
--                       Seq Scan on users t7
--             Aggregate
--               Limit
--                 Nested Loop Left Join
--                   Index Scan Backward using works_kept_tenant_id_id_idx on works t8
--                   Memoize
--                     Limit
--                       Seq Scan on users t12
--           Aggregate
--             Index Scan using tenant_counts_pkey on tenant_counts t13

SELECT COALESCE(SUM(memberships), 0) AS "memberships", COALESCE(SUM(api_keys), 0) AS "apiKeys", COALESCE(SUM(owned_tenants), 0) AS "ownedTenants" FROM user_counts WHERE user_id = $1::uuid;
-- plan:
--   Aggregate
--     Seq Scan on user_counts
-- generic plan (sent prepared):
--   Aggregate
--     Seq Scan on user_counts

-- operation: listTenants (after the 1,500th)

SELECT "t0"."id", "t0"."tenant_id" AS "tenantId", "Membership_tenant"."__prisma_data__" AS "tenant" FROM "public"."memberships" AS "t0" LEFT JOIN LATERAL (SELECT JSONB_BUILD_OBJECT('id', "t1"."id", 'name', "t1"."name", 'slug', "t1"."slug", 'ownerId', "t1"."owner_id", 'createdAt', "t1"."created_at", 'updatedAt', "t1"."updated_at", 'ownerId', "t1"."owner_id", 'owner', "Tenant_owner"."__prisma_data__", 'memberships', "Tenant_memberships"."__prisma_data__", 'works', "Tenant_works"."__prisma_data__", 'counts', "Tenant_counts"."__prisma_data__") AS "__prisma_data__" FROM "public"."tenants" AS "t1" LEFT JOIN LATERAL (SELECT JSONB_BUILD_OBJECT('firstName', "t2"."first_name", 'lastName', "t2"."last_name", 'email', "t2"."email") AS "__prisma_data__" FROM "public"."users" AS "t2" WHERE "t1"."owner_id" = "t2"."id" LIMIT $1) AS "Tenant_owner" ON true LEFT JOIN LATERAL (SELECT COALESCE(JSONB_AGG("__prisma_data__"), '[]') AS "__prisma_data__" FROM (SELECT "t5"."__prisma_data__" FROM (SELECT JSONB_BUILD_OBJECT('role', "t4"."role", 'userId', "t4"."user_id", 'user', "Membership_user"."__prisma_data__") AS "__prisma_data__", "t4"."id", "t4"."user_id" FROM (SELECT "t3".* FROM "public"."memberships" AS "t3" WHERE "t1"."id" = "t3"."tenant_id" /* root select */) AS "t4" LEFT JOIN LATERAL (SELECT JSONB_BUILD_OBJECT('firstName', "t7"."first_name", 'lastName', "t7"."last_name", 'email', "t7"."email") AS "__prisma_data__" FROM "public"."users" AS "t7" WHERE "t4"."user_id" = "t7"."id" LIMIT $2) AS "Membership_user" ON true /* inner select */) AS "t5" ORDER BY "t5"."id" ASC LIMIT $3 /* middle select */) AS "t6" /* outer select */) AS "Tenant_memberships" ON true LEFT JOIN LATERAL (SELECT COALESCE(JSONB_AGG("__prisma_data__"), '[]') AS "__prisma_data__" FROM (SELECT "t10"."__prisma_data__" FROM (SELECT JSONB_BUILD_OBJECT('id', "t9"."id", 'tenantId', "t9"."tenant_id", 'slug', "t9"."slug", 'name', "t9"."name", 'description', "t9"."description", 'ownerId', "t9"."owner_id", 'createdAt', "t9"."created_at", 'updatedAt', "t9"."updated_at", 'discardedAt', "t9"."discarded_at", 'search', "t9"."search", 'ownerId', "t9"."owner_id", 'owner', "Work_owner"."__prisma_data__") AS "__prisma_data__", "t9"."id", "t9"."discarded_at", "t9"."owner_id" FROM (SELECT "t8".* FROM "public"."works" AS "t8" WHERE "t1"."id" = "t8"."tenant_id" /* root select */) AS "t9" LEFT JOIN LATERAL (SELECT JSONB_BUILD_OBJECT('firstName', "t12"."first_name", 'lastName', "t12"."last_name", 'email', "t12"."email") AS "__prisma_data__" FROM "public"."users" AS "t12" WHERE "t9"."owner_id" = "t12"."id" LIMIT $4) AS "Work_owner" ON true /* inner select */) AS "t10" WHERE "t10"."discarded_at" IS NULL ORDER BY "t10"."id" DESC LIMIT $5 /* middle select */) AS "t11" /* outer select */) AS "Tenant_works" ON true LEFT JOIN LATERAL (SELECT COALESCE(JSONB_AGG("__prisma_data__"), '[]') AS "__prisma_data__" FROM (SELECT "t15"."__prisma_data__" FROM (SELECT JSONB_BUILD_OBJECT('keptWorks', "t14"."kept_works") AS "__prisma_data__" FROM (SELECT "t13".* FROM "public"."tenant_counts" AS "t13" WHERE "t1"."id" = "t13"."tenant_id" /* root select */) AS "t14" /* inner select */) AS "t15" /* middle select */) AS "t16" /* outer select */) AS "Tenant_counts" ON true WHERE "t0"."tenant_id" = "t1"."id" LIMIT $6) AS "Membership_tenant" ON true WHERE ("t0"."user_id" = $7 AND "t0"."tenant_id" < $8) ORDER BY "t0"."tenant_id" DESC LIMIT $9;
-- plan:
--   Limit
--     Nested Loop Left Join
--       Index Scan Backward using memberships_user_id_tenant_id_idx on memberships t0
--       Limit
--         Nested Loop Left Join
--           Nested Loop Left Join
--             Nested Loop Left Join
--               Nested Loop Left Join
--                 Index Scan using tenants_pkey on tenants t1
--                 Limit
--                   Seq Scan on users t2
--               Aggregate
--                 Limit
--                   Nested Loop Left Join
--                     Index Scan using memberships_tenant_id_id_idx on memberships t3
--                     Limit
--                       Seq Scan on users t7
--             Aggregate
--               Limit
--                 Nested Loop Left Join
--                   Index Scan Backward using works_kept_tenant_id_id_idx on works t8
--                   Memoize
--                     Limit
--                       Seq Scan on users t12
--           Aggregate
--             Index Scan using tenant_counts_pkey on tenant_counts t13

SELECT COALESCE(SUM(memberships), 0) AS "memberships", COALESCE(SUM(api_keys), 0) AS "apiKeys", COALESCE(SUM(owned_tenants), 0) AS "ownedTenants" FROM user_counts WHERE user_id = $1::uuid;
-- plan:
--   Aggregate
--     Seq Scan on user_counts
-- generic plan (sent prepared):
--   Aggregate
--     Seq Scan on user_counts
