-- Written by packages/server/test/integration/statement-plans.test.ts: the statements each operation sends
-- (in text order), with the shape of their plans on PostgreSQL. UPDATE_STATEMENT_PLANS=1 rewrites the file
-- (docs/development.md).

-- operation: createApiKey (restricted to a tenant)

SELECT count(*) > 0 AS "holds" FROM (SELECT 1 FROM memberships WHERE user_id = $1::uuid
AND tenant_id = ANY($2::uuid[]) AND role::text = ANY($3::text[]) ORDER BY tenant_id LIMIT 1) found;
-- plan:
--   Aggregate
--     Limit
--       Sort
--         Index Scan using memberships_user_id_tenant_id_idx on memberships

SELECT tenant_id::text AS "tenantId" FROM memberships
WHERE user_id = $1::uuid AND tenant_id = ANY($2::uuid[]);
-- plan:
--   Index Only Scan using memberships_tenant_id_user_id_key on memberships

-- operation: createApiKey (scoped, every tenant)

SELECT count(*) > 0 AS "holds" FROM (SELECT 1 FROM memberships WHERE user_id = $1::uuid
AND role::text = ANY($2::text[]) ORDER BY tenant_id LIMIT 1) found;
-- plan:
--   Aggregate
--     Limit
--       Index Scan using memberships_user_id_tenant_id_idx on memberships
