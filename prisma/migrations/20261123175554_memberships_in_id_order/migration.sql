-- CreateIndex
CREATE INDEX "memberships_tenant_id_id_idx" ON "memberships"("tenant_id", "id");
