-- Written by packages/server/test/integration/statement-plans.test.ts: the statements each operation sends
-- (in text order), with the shape of their plans on PostgreSQL. UPDATE_STATEMENT_PLANS=1 rewrites the file
-- (docs/development.md).

-- operation: count_new_tenant

SELECT 1 FROM user_counts WHERE user_id = $1::uuid ORDER BY slot FOR UPDATE;
-- plan:
--   LockRows
--     Sort
--       Bitmap Heap Scan on user_counts
--         Bitmap Index Scan on user_counts_pkey

SELECT coalesce(sum(owned_tenants), 0) FROM user_counts WHERE user_id = $1::uuid;
-- plan:
--   Aggregate
--     Bitmap Heap Scan on user_counts
--       Bitmap Index Scan on user_counts_pkey

UPDATE user_counts SET owned_tenants = owned_tenants + 1, memberships = memberships + 1
WHERE user_id = $1::uuid AND slot = 0;
-- plan:
--   Update on user_counts
--     Index Scan using user_counts_pkey on user_counts
