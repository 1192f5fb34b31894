-- Hand-written. The row_counts migration told PostgreSQL that works.tenant_id has 5% as many distinct values as
-- works has rows, so that a page of tenants would not walk works_pkey for each one's first works. But inside a
-- lateral join (a tenant's embedded first page: GET /tenants/{id}, each tenant of a list) that makes 20 works per
-- tenant, and for 20 rows a bitmap scan and a sort look as cheap as reading the (tenant_id, id) index backwards:
-- PostgreSQL then read and sorted every kept work of a big tenant to return 21 (measured: 42.7 ms for a tenant with
-- 4,500 works, 0.16 ms by the index; it grows with the tenant). Plan for 1,000 works per tenant (0.1% of the rows):
-- the index read stays the cheapest plan for small and big tenants alike, and the primary key walk stays out.
-- Tenants in the most-common-values list keep their own estimate.
ALTER TABLE "works" ALTER COLUMN "tenant_id" SET (n_distinct = -0.001);
ANALYZE "works";
