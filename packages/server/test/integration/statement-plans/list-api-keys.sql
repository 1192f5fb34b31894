-- Written by packages/server/test/integration/statement-plans.test.ts: the statements each operation sends
-- (in text order), with the shape of their plans on PostgreSQL. UPDATE_STATEMENT_PLANS=1 rewrites the file
-- (docs/development.md).

-- operation: listApiKeys

SELECT "t0"."id", "t0"."user_id" AS "userId", "t0"."name", "t0"."prefix", "t0"."secret_hash" AS "secretHash", "t0"."created_at" AS "createdAt", "t0"."last_used_at" AS "lastUsedAt", "t0"."revoked_at" AS "revokedAt", "t0"."tenant_ids" AS "tenantIds", "t0"."scopes", "t0"."expires_at" AS "expiresAt" FROM "public"."api_keys" AS "t0" WHERE "t0"."user_id" = $1 ORDER BY "t0"."id" DESC LIMIT $2;
-- plan:
--   Limit
--     Index Scan Backward using api_keys_pkey on api_keys t0

SELECT COALESCE(SUM(memberships), 0) AS "memberships", COALESCE(SUM(api_keys), 0) AS "apiKeys", COALESCE(SUM(owned_tenants), 0) AS "ownedTenants" FROM user_counts WHERE user_id = $1::uuid;
-- plan:
--   Aggregate
--     Seq Scan on user_counts
-- generic plan (sent prepared):
--   Aggregate
--     Seq Scan on user_counts
