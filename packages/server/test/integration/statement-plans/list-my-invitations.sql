-- Written by packages/server/test/integration/statement-plans.test.ts: the statements each operation sends
-- (in text order), with the shape of their plans on PostgreSQL. UPDATE_STATEMENT_PLANS=1 rewrites the file
-- (docs/development.md).

-- operation: listMyInvitations (first page)

SELECT "t0"."id", "t0"."tenant_id" AS "tenantId", "t0"."email", "t0"."role"::text, "t0"."first_name" AS "firstName", "t0"."last_name" AS "lastName", "t0"."invited_by" AS "invitedBy", "t0"."created_at" AS "createdAt", "t0"."expires_at" AS "expiresAt", "Invitation_inviter"."__prisma_data__" AS "inviter", "Invitation_tenant"."__prisma_data__" AS "tenant" FROM "public"."invitations" AS "t0" LEFT JOIN LATERAL (SELECT JSONB_BUILD_OBJECT('firstName', "t1"."first_name", 'lastName', "t1"."last_name", 'email', "t1"."email") AS "__prisma_data__" FROM "public"."users" AS "t1" WHERE "t0"."invited_by" = "t1"."id" LIMIT $1) AS "Invitation_inviter" ON true LEFT JOIN LATERAL (SELECT JSONB_BUILD_OBJECT('id', "t2"."id", 'name', "t2"."name") AS "__prisma_data__" FROM "public"."tenants" AS "t2" WHERE "t0"."tenant_id" = "t2"."id" LIMIT $2) AS "Invitation_tenant" ON true WHERE ("t0"."email" = $3 AND "t0"."expires_at" > $4) ORDER BY "t0"."id" DESC LIMIT $5;
-- plan:
--   Limit
--     Nested Loop Left Join
--       Nested Loop Left Join
--         Index Scan Backward using invitations_email_id_idx on invitations t0
--         Memoize
--           Limit
--             Seq Scan on users t1
--       Memoize
--         Limit
--           Index Scan using tenants_pkey on tenants t2

SELECT COUNT(*) AS "_count$_all" FROM (SELECT "public"."invitations"."id" FROM "public"."invitations" WHERE ("public"."invitations"."email" = $1 AND "public"."invitations"."expires_at" > $2) OFFSET $3) AS "sub";
-- plan:
--   Aggregate
--     Bitmap Heap Scan on invitations
--       Bitmap Index Scan on invitations_email_id_idx

-- operation: listMyInvitations (after the first page)

SELECT "t0"."id", "t0"."tenant_id" AS "tenantId", "t0"."email", "t0"."role"::text, "t0"."first_name" AS "firstName", "t0"."last_name" AS "lastName", "t0"."invited_by" AS "invitedBy", "t0"."created_at" AS "createdAt", "t0"."expires_at" AS "expiresAt", "Invitation_inviter"."__prisma_data__" AS "inviter", "Invitation_tenant"."__prisma_data__" AS "tenant" FROM "public"."invitations" AS "t0" LEFT JOIN LATERAL (SELECT JSONB_BUILD_OBJECT('firstName', "t1"."first_name", 'lastName', "t1"."last_name", 'email', "t1"."email") AS "__prisma_data__" FROM "public"."users" AS "t1" WHERE "t0"."invited_by" = "t1"."id" LIMIT $1) AS "Invitation_inviter" ON true LEFT JOIN LATERAL (SELECT JSONB_BUILD_OBJECT('id', "t2"."id", 'name', "t2"."name") AS "__prisma_data__" FROM "public"."tenants" AS "t2" WHERE "t0"."tenant_id" = "t2"."id" LIMIT $2) AS "Invitation_tenant" ON true WHERE ("t0"."email" = $3 AND "t0"."expires_at" > $4 AND "t0"."id" < $5) ORDER BY "t0"."id" DESC LIMIT $6;
-- plan:
--   Limit
--     Sort
--       Nested Loop Left Join
--         Nested Loop Left Join
--           Bitmap Heap Scan on invitations t0
--             Bitmap Index Scan on invitations_email_id_idx
--           Memoize
--             Limit
--               Seq Scan on users t1
--         Memoize
--           Limit
--             Index Scan using tenants_pkey on tenants t2

SELECT COUNT(*) AS "_count$_all" FROM (SELECT "public"."invitations"."id" FROM "public"."invitations" WHERE ("public"."invitations"."email" = $1 AND "public"."invitations"."expires_at" > $2) OFFSET $3) AS "sub";
-- plan:
--   Aggregate
--     Bitmap Heap Scan on invitations
--       Bitmap Index Scan on invitations_email_id_idx
