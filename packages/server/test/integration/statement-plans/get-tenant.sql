-- Written by packages/server/test/integration/statement-plans.test.ts: the statements each operation sends
-- (in text order), with the shape of their plans on PostgreSQL. UPDATE_STATEMENT_PLANS=1 rewrites the file
-- (docs/development.md).

-- operation: getTenant (the big tenant)

SELECT t.id, t.name, t.slug, t.created_at AS "createdAt", t.updated_at AS "updatedAt", json_build_object('firstName', o.first_name, 'lastName', o.last_name, 'email', o.email) AS owner,
  (SELECT role::text FROM memberships WHERE tenant_id = t.id AND user_id = $1::uuid) AS "callerRole",
  (SELECT COALESCE(json_agg(json_build_object('role', m.role, 'user', json_build_object('firstName', m.first_name, 'lastName', m.last_name, 'email', m.email)) ORDER BY m.id), '[]')
   FROM (SELECT m.id, m.role, mu.first_name, mu.last_name, mu.email
         FROM memberships m JOIN users mu ON mu.id = m.user_id
         WHERE m.tenant_id = t.id ORDER BY m.id LIMIT 100) AS m) AS memberships,
  (SELECT COALESCE(json_agg(json_build_object(
            'id', w.id, 'slug', w.slug, 'name', w.name, 'description', w.description, 'createdAt', w.created_at,
            'updatedAt', w.updated_at, 'discardedAt', w.discarded_at, 'owner', json_build_object('firstName', w.first_name, 'lastName', w.last_name, 'email', w.email)) ORDER BY w.id DESC), '[]')
   FROM (SELECT w.id, w.slug, w.name, w.description, w.created_at, w.updated_at, w.discarded_at,
                wu.first_name, wu.last_name, wu.email
         FROM works w JOIN users wu ON wu.id = w.owner_id
         WHERE w.tenant_id = t.id AND w.discarded_at IS NULL ORDER BY w.id DESC LIMIT 21) AS w) AS works,
  (SELECT COALESCE(SUM(c.kept_works), 0) FROM tenant_counts c WHERE c.tenant_id = t.id) AS "keptWorks"
FROM tenants t JOIN users o ON o.id = t.owner_id
WHERE t.id = $2::uuid;
-- plan:
--   Hash Join
--     Seq Scan on users o
--     Hash
--       Index Scan using tenants_pkey on tenants t
--     [SubPlan 1] Index Scan using memberships_tenant_id_id_idx on memberships
--     [SubPlan 2] Aggregate
--       Limit
--         Sort
--           Hash Join
--             Seq Scan on users mu
--             Hash
--               Index Scan using memberships_tenant_id_id_idx on memberships m
--     [SubPlan 3] Aggregate
--       Limit
--         Nested Loop
--           Index Scan Backward using works_kept_tenant_id_id_idx on works w
--           Memoize
--             Index Scan using users_pkey on users wu
--     [SubPlan 4] Aggregate
--       Index Scan using tenant_counts_pkey on tenant_counts c
-- generic plan (sent prepared):
--   Hash Join
--     Seq Scan on users o
--     Hash
--       Index Scan using tenants_pkey on tenants t
--     [SubPlan 1] Index Scan using memberships_tenant_id_id_idx on memberships
--     [SubPlan 2] Aggregate
--       Limit
--         Sort
--           Hash Join
--             Seq Scan on users mu
--             Hash
--               Index Scan using memberships_tenant_id_id_idx on memberships m
--     [SubPlan 3] Aggregate
--       Limit
--         Nested Loop
--           Index Scan Backward using works_kept_tenant_id_id_idx on works w
--           Memoize
--             Index Scan using users_pkey on users wu
--     [SubPlan 4] Aggregate
--       Index Scan using tenant_counts_pkey on tenant_counts c
