-- Hand-written. Search, the tenant-wide request list and the events feed.
--
-- Search texts are folded by the application (domain/search/fold.ts: accents removed, lower case, one space before
-- each word), since PGlite has no `unaccent`; the application writes them in the INSERT or UPDATE that writes the
-- row (no trigger on the write path). pg_trgm indexes them on both databases; btree_gin puts the tenant into the
-- same GIN index, so that a search reads the tenant's postings only.
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE EXTENSION IF NOT EXISTS btree_gin;

-- Rows written before this migration: the same folding in SQL, for the accents of Latin scripts (what translate()
-- lists). Rows written from now on are folded by the application.
CREATE FUNCTION pg_temp.search_fold(text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT regexp_replace(
           ' ' || btrim(regexp_replace(
             translate(lower($1),
               'àáâãäåāăąçćčďèéêëēėęěìíîïīįłñńňòóôõöøōőŕřśšşťùúûüūůűųýÿźżž',
               'aaaaaaaaacccdeeeeeeeeiiiiiilnnnoooooooorrsssttuuuuuuuuyyzzz'),
             '[^[:alnum:]]+', ' ', 'g')),
           '^ $', '')
$$;

ALTER TABLE "works" ADD COLUMN "search" TEXT NOT NULL DEFAULT '';
UPDATE "works" SET "search" = pg_temp.search_fold("name" || ' ' || "slug" || ' ' || "description");

-- A request's tenant, written by the insert (the work's tenant, which never changes): the tenant-wide list reads
-- the tenant's requests by index instead of joining every work of the tenant.
ALTER TABLE "requests" ADD COLUMN "tenant_id" UUID;
ALTER TABLE "requests" ADD COLUMN "search" TEXT NOT NULL DEFAULT '';
UPDATE "requests" r
SET "tenant_id" = w."tenant_id",
    "search" = pg_temp.search_fold(r."title" || ' ' || r."message" || ' ' || r."recipient_email" || ' '
                                   || r."recipient_first_name" || ' ' || r."recipient_last_name")
FROM "works" w WHERE w."id" = r."work_id";
ALTER TABLE "requests" ALTER COLUMN "tenant_id" SET NOT NULL;

CREATE INDEX "works_search_idx" ON "works" USING gin ("tenant_id", "search" gin_trgm_ops);
CREATE INDEX "requests_search_idx" ON "requests" USING gin ("tenant_id", "search" gin_trgm_ops);
-- The tenant's requests newest first: all, by status, to one recipient; and those with a due date (overdue, due
-- soon).
CREATE INDEX "requests_tenant_id_id_idx" ON "requests" ("tenant_id", "id");
CREATE INDEX "requests_tenant_id_status_id_idx" ON "requests" ("tenant_id", "status", "id");
CREATE INDEX "requests_tenant_id_recipient_email_id_idx" ON "requests" ("tenant_id", "recipient_email", "id");
CREATE INDEX "requests_tenant_id_id_due_idx" ON "requests" ("tenant_id", "id") WHERE "due_at" IS NOT NULL;

-- The events feed: the tenant's events newest first (not the test events, which go to one endpoint only).
CREATE INDEX "webhook_events_feed_idx" ON "webhook_events" ("tenant_id", "id") WHERE "endpoint_id" IS NULL;
