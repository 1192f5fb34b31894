-- Written by packages/server/test/integration/statement-plans.test.ts: the statements each operation sends
-- (in text order), with the shape of their plans on PostgreSQL. UPDATE_STATEMENT_PLANS=1 rewrites the file
-- (docs/development.md).

-- operation: getMe (after authenticate)

SELECT "t0"."id", "t0"."email", "t0"."first_name" AS "firstName", "t0"."last_name" AS "lastName", "t0"."created_at" AS "createdAt" FROM "public"."users" AS "t0" WHERE ("t0"."id" = $1 AND 1=1) LIMIT $2;
-- plan:
--   Limit
--     Seq Scan on users t0

SELECT k.id, k.user_id AS "userId", k.secret_hash AS "secretHash", k.revoked_at AS "revokedAt",
       k.last_used_at AS "lastUsedAt", k.expires_at AS "expiresAt",
       coalesce(k.tenant_ids, '{}')::text[] AS "tenantIds", coalesce(k.scopes, '{}') AS "scopes",
       u.email, u.first_name AS "firstName", u.last_name AS "lastName"
FROM api_keys k JOIN users u ON u.id = k.user_id WHERE k.prefix = $1;
-- plan:
--   Merge Join
--     Index Scan using users_pkey on users u
--     Sort
--       Index Scan using api_keys_prefix_key on api_keys k
-- generic plan (sent prepared):
--   Merge Join
--     Index Scan using users_pkey on users u
--     Sort
--       Index Scan using api_keys_prefix_key on api_keys k
