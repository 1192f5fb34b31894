-- Hand-written. The tenant-wide request list's capped count reads its index only.
--
-- That count (up to 1,001 requests a page) checks each request's work is kept: with the work's id in the index
-- it walks, it reads no request row (a request is about a kilobyte: one page each), only the index and the work.
DROP INDEX "requests_tenant_id_id_idx";
DROP INDEX "requests_tenant_id_status_id_idx";
DROP INDEX "requests_tenant_id_recipient_email_id_idx";
CREATE INDEX "requests_tenant_id_id_work_id_idx" ON "requests" ("tenant_id", "id", "work_id");
CREATE INDEX "requests_tenant_id_status_id_work_id_idx" ON "requests" ("tenant_id", "status", "id", "work_id");
CREATE INDEX "requests_tenant_id_recipient_email_id_work_id_idx" ON "requests" ("tenant_id", "recipient_email", "id", "work_id");
