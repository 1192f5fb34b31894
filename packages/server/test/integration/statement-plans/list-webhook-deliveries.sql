-- Written by packages/server/test/integration/statement-plans.test.ts: the statements each operation sends
-- (in text order), with the shape of their plans on PostgreSQL. UPDATE_STATEMENT_PLANS=1 rewrites the file
-- (docs/development.md).

-- operation: listWebhookDeliveries

SELECT "t0"."id", "t0"."endpoint_id" AS "endpointId", "t0"."tenant_id" AS "tenantId", "t0"."event_id" AS "eventId", "t0"."ordering_key" AS "orderingKey", "t0"."status"::text, "t0"."attempts", "t0"."next_attempt_at" AS "nextAttemptAt", "t0"."leased_until" AS "leasedUntil", "t0"."last_attempt_at" AS "lastAttemptAt", "t0"."last_status_code" AS "lastStatusCode", "t0"."last_duration_ms" AS "lastDurationMs", "t0"."last_error" AS "lastError", "t0"."last_response_excerpt" AS "lastResponseExcerpt", "t0"."delivered_at" AS "deliveredAt", "t0"."created_at" AS "createdAt", "WebhookDelivery_event"."__prisma_data__" AS "event" FROM "public"."webhook_deliveries" AS "t0" LEFT JOIN LATERAL (SELECT JSONB_BUILD_OBJECT('body', "t1"."body") AS "__prisma_data__" FROM "public"."webhook_events" AS "t1" WHERE "t0"."event_id" = "t1"."id" LIMIT $1) AS "WebhookDelivery_event" ON true WHERE "t0"."endpoint_id" = $2 ORDER BY "t0"."id" DESC LIMIT $3;
-- plan:
--   Limit
--     Nested Loop Left Join
--       Index Scan Backward using webhook_deliveries_pkey on webhook_deliveries t0
--       Limit
--         Index Scan using webhook_events_pkey on webhook_events t1

SELECT "t0"."id", "t0"."tenant_id" AS "tenantId", "t0"."url", "t0"."description", "t0"."event_types" AS "eventTypes", "t0"."enabled", "t0"."disabled_reason" AS "disabledReason", "t0"."failing_since" AS "failingSince", "t0"."secret", "t0"."previous_secret" AS "previousSecret", "t0"."previous_secret_expires_at" AS "previousSecretExpiresAt", "t0"."created_at" AS "createdAt", "t0"."updated_at" AS "updatedAt" FROM "public"."webhook_endpoints" AS "t0" WHERE ("t0"."id" = $1 AND "t0"."tenant_id" = $2) LIMIT $3;
-- plan:
--   Limit
--     Seq Scan on webhook_endpoints t0

SELECT deliveries FROM webhook_endpoint_counts WHERE endpoint_id = $1::uuid;
-- plan:
--   Seq Scan on webhook_endpoint_counts
-- generic plan (sent prepared):
--   Seq Scan on webhook_endpoint_counts

SELECT role::text AS role FROM memberships WHERE tenant_id = $1::uuid AND user_id = $2::uuid;
-- plan:
--   Bitmap Heap Scan on memberships
--     Bitmap Index Scan on memberships_tenant_id_user_id_key
-- generic plan (sent prepared):
--   Index Scan using memberships_tenant_id_id_idx on memberships
