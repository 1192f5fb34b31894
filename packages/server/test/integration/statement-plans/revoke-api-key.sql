-- Written by packages/server/test/integration/statement-plans.test.ts: the statements each operation sends
-- (in text order), with the shape of their plans on PostgreSQL. UPDATE_STATEMENT_PLANS=1 rewrites the file
-- (docs/development.md).

-- operation: revokeApiKey

SELECT "t0"."id", "t0"."user_id" AS "userId", "t0"."name", "t0"."prefix", "t0"."secret_hash" AS "secretHash", "t0"."created_at" AS "createdAt", "t0"."last_used_at" AS "lastUsedAt", "t0"."revoked_at" AS "revokedAt", "t0"."tenant_ids" AS "tenantIds", "t0"."scopes", "t0"."expires_at" AS "expiresAt" FROM "public"."api_keys" AS "t0" WHERE ("t0"."id" = $1 AND "t0"."user_id" = $2) LIMIT $3;
-- plan:
--   Limit
--     Index Scan using api_keys_pkey on api_keys t0

UPDATE "public"."api_keys" SET "revoked_at" = $1 WHERE ("public"."api_keys"."id" = $2 AND "public"."api_keys"."user_id" = $3 AND "public"."api_keys"."revoked_at" IS NULL);
-- plan:
--   Update on api_keys
--     Index Scan using api_keys_active_user_id_idx on api_keys
