-- Written by packages/server/test/integration/statement-plans.test.ts: the statements each operation sends
-- (in text order), with the shape of their plans on PostgreSQL. UPDATE_STATEMENT_PLANS=1 rewrites the file
-- (docs/development.md).

-- operation: listWebhookEndpoints

SELECT "t0"."id", "t0"."tenant_id" AS "tenantId", "t0"."url", "t0"."description", "t0"."event_types" AS "eventTypes", "t0"."enabled", "t0"."disabled_reason" AS "disabledReason", "t0"."failing_since" AS "failingSince", "t0"."secret", "t0"."previous_secret" AS "previousSecret", "t0"."previous_secret_expires_at" AS "previousSecretExpiresAt", "t0"."created_at" AS "createdAt", "t0"."updated_at" AS "updatedAt" FROM "public"."webhook_endpoints" AS "t0" WHERE "t0"."tenant_id" = $1 ORDER BY "t0"."id" DESC LIMIT $2;
-- plan:
--   Limit
--     Sort
--       Seq Scan on webhook_endpoints t0

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
