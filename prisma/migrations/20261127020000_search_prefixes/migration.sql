-- Hand-written. Search by word prefixes instead of trigrams.
--
-- A search matches the start of a word (`rap` finds "Rapport"). Trigram indexes answered that with the postings of
-- every trigram of every query word, all read in full: a word most rows have ("request", or the tenant's id through
-- btree_gin) costs as many postings as rows, whichever other word is rare. An array of every prefix of every word
-- turns each query word into ONE exact key of a GIN index: PostgreSQL reads the rarest key's postings and only
-- skips through the common ones, and its statistics on array elements tell the planner how common a word is, so
-- that it walks (tenant_id, id) newest first for common words and reads the index for rare ones.
--
-- The prefixes are computed by the database from the folded `search` text the application writes (a generated
-- column: every write of `search` keeps them in step, and existing rows are filled by this ALTER). Prefixes are at
-- most 16 characters: a longer query word is looked up by its first 16 and checked against `search` itself.
CREATE FUNCTION search_prefixes(search text) RETURNS text[]
  LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  RETURN ARRAY(
    SELECT DISTINCT left(word, n)
    FROM unnest(string_to_array(btrim(search), ' ')) AS word
    CROSS JOIN LATERAL generate_series(1, least(length(word), 16)) AS n
    WHERE word <> ''
  );

ALTER TABLE "works" ADD COLUMN "search_prefixes" TEXT[] GENERATED ALWAYS AS (search_prefixes("search")) STORED;
ALTER TABLE "requests" ADD COLUMN "search_prefixes" TEXT[] GENERATED ALWAYS AS (search_prefixes("search")) STORED;

-- How common each prefix is, for the planner's choice between the index and a walk newest first: the default
-- statistics keep the 1,000 most common elements, which leaves every 3-digit or 4-letter prefix "unknown" and
-- rated as common as the least common kept one; 10,000 tell rare words from common ones.
ALTER TABLE "works" ALTER COLUMN "search_prefixes" SET STATISTICS 1000;
ALTER TABLE "requests" ALTER COLUMN "search_prefixes" SET STATISTICS 1000;

DROP INDEX "works_search_idx";
DROP INDEX "requests_search_idx";
CREATE INDEX "works_search_idx" ON "works" USING gin ("tenant_id", "search_prefixes");
CREATE INDEX "requests_search_idx" ON "requests" USING gin ("tenant_id", "search_prefixes");

-- The prefixes make a work row about twice as wide, which makes PostgreSQL's estimate of reading a tenant's first
-- works through the kept works' index (one row per heap page) dearer than walking works_pkey and filtering, inside
-- the lateral join of a page of tenants where the tenant is a parameter (migration works_per_tenant_estimate): on
-- the small data set it walked all 5,000 works for each tenant of the page. Plan for 200 works per tenant
-- (0.5% of the rows) instead of 1,000: the walk looks as dear as it is, and the index read of 21 rows stays cheaper
-- than a bitmap scan and a sort of 200. Tenants in the most-common-values list keep their own estimate.
ALTER TABLE "works" ALTER COLUMN "tenant_id" SET (n_distinct = -0.005);
ANALYZE "works";
