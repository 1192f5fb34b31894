-- AlterTable
ALTER TABLE "users" ADD COLUMN "owned_tenant_count" INTEGER NOT NULL DEFAULT 0;

-- Hand-written: the count of the tenants each user already owns (issue 23's cap on tenants per user).
UPDATE "users" u SET "owned_tenant_count" = c.n
FROM (SELECT "owner_id", count(*)::int AS n FROM "tenants" GROUP BY "owner_id") c
WHERE u."id" = c."owner_id";

-- Hand-written: a partial index, which schema.prisma cannot express. The cap on active API keys per user counts
-- at most the cap's number of entries here, however many revoked keys the user has.
CREATE INDEX "api_keys_active_user_id_idx" ON "api_keys"("user_id") WHERE "revoked_at" IS NULL;
