-- Written by packages/server/test/integration/statement-plans.test.ts: the statements each operation sends
-- (in text order), with the shape of their plans on PostgreSQL. UPDATE_STATEMENT_PLANS=1 rewrites the file
-- (docs/development.md).

-- operation: createWork (a taken name)

INSERT INTO work_slug_counters AS c (tenant_id, base, last_number) VALUES ($1::uuid, $2, 2)
ON CONFLICT (tenant_id, base) DO UPDATE SET last_number = c.last_number + 1
RETURNING last_number AS n;
-- plan:
--   Insert on work_slug_counters c
--     Result

WITH
work AS (
  INSERT INTO works (id, tenant_id, slug, name, description, owner_id, created_at, updated_at, search)
  SELECT $1::uuid, $2::uuid, $3, $4, $5, $6::uuid,
         $7::timestamptz, $7::timestamptz, $8
  WHERE EXISTS (SELECT 1 FROM memberships WHERE tenant_id = $2::uuid AND user_id = $6::uuid
 AND role IN ('member', 'admin', 'owner')) AND TRUE
  RETURNING id)
SELECT id FROM work;
-- plan:
--   CTE Scan on work
--     [CTE work] Insert on works
--       [InitPlan 1 (returns $0)] Index Scan using memberships_user_id_tenant_id_idx on memberships
--       Result
-- generic plan (sent prepared):
--   CTE Scan on work
--     [CTE work] Insert on works
--       [InitPlan 1 (returns $0)] Index Scan using memberships_tenant_id_id_idx on memberships
--       Result

WITH
work AS (
  INSERT INTO works (id, tenant_id, slug, name, description, owner_id, created_at, updated_at, search)
  SELECT $1::uuid, $2::uuid, $3, $4, $5, $6::uuid,
         $7::timestamptz, $7::timestamptz, $8
  WHERE EXISTS (SELECT 1 FROM memberships WHERE tenant_id = $2::uuid AND user_id = $6::uuid
 AND role IN ('member', 'admin', 'owner')) AND TRUE
  RETURNING id)
SELECT id FROM work;
-- plan:
--   CTE Scan on work
--     [CTE work] Insert on works
--       [InitPlan 1 (returns $0)] Index Scan using memberships_user_id_tenant_id_idx on memberships
--       Result
-- generic plan (sent prepared):
--   CTE Scan on work
--     [CTE work] Insert on works
--       [InitPlan 1 (returns $0)] Index Scan using memberships_tenant_id_id_idx on memberships
--       Result

-- operation: createWork (a new name)

WITH
work AS (
  INSERT INTO works (id, tenant_id, slug, name, description, owner_id, created_at, updated_at, search)
  SELECT $1::uuid, $2::uuid, $3, $4, $5, $6::uuid,
         $7::timestamptz, $7::timestamptz, $8
  WHERE EXISTS (SELECT 1 FROM memberships WHERE tenant_id = $2::uuid AND user_id = $6::uuid
 AND role IN ('member', 'admin', 'owner')) AND TRUE
  RETURNING id)
SELECT id FROM work;
-- plan:
--   CTE Scan on work
--     [CTE work] Insert on works
--       [InitPlan 1 (returns $0)] Index Scan using memberships_user_id_tenant_id_idx on memberships
--       Result
-- generic plan (sent prepared):
--   CTE Scan on work
--     [CTE work] Insert on works
--       [InitPlan 1 (returns $0)] Index Scan using memberships_tenant_id_id_idx on memberships
--       Result
