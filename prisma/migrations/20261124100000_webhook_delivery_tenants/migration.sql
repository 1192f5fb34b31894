-- AlterTable
ALTER TABLE "webhook_deliveries" ADD COLUMN "tenant_id" UUID,
ADD COLUMN "leased_until" TIMESTAMPTZ(3);

-- Hand-written: the existing deliveries take their endpoint's tenant, then the column becomes required (the
-- dispatcher's fan-out fills it from the event).
UPDATE "webhook_deliveries" d SET "tenant_id" = e."tenant_id" FROM "webhook_endpoints" e WHERE e."id" = d."endpoint_id";
ALTER TABLE "webhook_deliveries" ALTER COLUMN "tenant_id" SET NOT NULL;

-- Hand-written: partial indexes, which schema.prisma cannot express. The claim walks the tenants that have pending
-- deliveries (one probe each) and reads each one's oldest due ones in claim order; the second holds only the
-- deliveries in flight, which the per-tenant cap counts.
CREATE INDEX "webhook_deliveries_pending_by_tenant_idx" ON "webhook_deliveries"("tenant_id", "next_attempt_at", "event_id", "id") WHERE "status" = 'pending';
CREATE INDEX "webhook_deliveries_leased_idx" ON "webhook_deliveries"("tenant_id", "leased_until") WHERE "leased_until" IS NOT NULL;
