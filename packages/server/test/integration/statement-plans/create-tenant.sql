-- Written by packages/server/test/integration/statement-plans.test.ts: the statements each operation sends
-- (in text order), with the shape of their plans on PostgreSQL. UPDATE_STATEMENT_PLANS=1 rewrites the file
-- (docs/development.md).

-- operation: createTenant (the popular name)

INSERT INTO tenant_slug_counters AS c (base, last_number) VALUES ($1, 2)
ON CONFLICT (base) DO UPDATE SET last_number = c.last_number + 1
RETURNING last_number AS n;
-- plan:
--   Insert on tenant_slug_counters c
--     Result

WITH
placed AS (SELECT count_new_tenant($1::uuid, $2::int) AS placed WHERE TRUE),
tenant AS (
  INSERT INTO tenants (id, name, slug, owner_id, created_at, updated_at)
  SELECT $3::uuid, $4, $5, $1::uuid, $6::timestamptz, $6::timestamptz FROM placed
  WHERE placed
  RETURNING id),
members_counted AS (
  INSERT INTO tenant_counts (tenant_id, slot, members) SELECT id, counter_slot(), 1 FROM tenant)
INSERT INTO memberships (id, tenant_id, user_id, role, created_at)
SELECT $7::uuid, id, $1::uuid, 'owner'::member_role, $6::timestamptz FROM tenant
RETURNING tenant_id AS id;
-- plan:
--   Insert on memberships
--     [CTE placed] Result
--     [CTE tenant] Insert on tenants
--       CTE Scan on placed
--     [CTE members_counted] Insert on tenant_counts
--       CTE Scan on tenant tenant_1
--     CTE Scan on tenant
-- generic plan (sent prepared):
--   Insert on memberships
--     [CTE placed] Result
--     [CTE tenant] Insert on tenants
--       CTE Scan on placed
--     [CTE members_counted] Insert on tenant_counts
--       CTE Scan on tenant tenant_1
--     CTE Scan on tenant

WITH
placed AS (SELECT count_new_tenant($1::uuid, $2::int) AS placed WHERE TRUE),
tenant AS (
  INSERT INTO tenants (id, name, slug, owner_id, created_at, updated_at)
  SELECT $3::uuid, $4, $5, $1::uuid, $6::timestamptz, $6::timestamptz FROM placed
  WHERE placed
  RETURNING id),
members_counted AS (
  INSERT INTO tenant_counts (tenant_id, slot, members) SELECT id, counter_slot(), 1 FROM tenant)
INSERT INTO memberships (id, tenant_id, user_id, role, created_at)
SELECT $7::uuid, id, $1::uuid, 'owner'::member_role, $6::timestamptz FROM tenant
RETURNING tenant_id AS id;
-- plan:
--   Insert on memberships
--     [CTE placed] Result
--     [CTE tenant] Insert on tenants
--       CTE Scan on placed
--     [CTE members_counted] Insert on tenant_counts
--       CTE Scan on tenant tenant_1
--     CTE Scan on tenant
-- generic plan (sent prepared):
--   Insert on memberships
--     [CTE placed] Result
--     [CTE tenant] Insert on tenants
--       CTE Scan on placed
--     [CTE members_counted] Insert on tenant_counts
--       CTE Scan on tenant tenant_1
--     CTE Scan on tenant

-- operation: createTenant (a new name)

WITH
placed AS (SELECT count_new_tenant($1::uuid, $2::int) AS placed WHERE TRUE),
tenant AS (
  INSERT INTO tenants (id, name, slug, owner_id, created_at, updated_at)
  SELECT $3::uuid, $4, $5, $1::uuid, $6::timestamptz, $6::timestamptz FROM placed
  WHERE placed
  RETURNING id),
members_counted AS (
  INSERT INTO tenant_counts (tenant_id, slot, members) SELECT id, counter_slot(), 1 FROM tenant)
INSERT INTO memberships (id, tenant_id, user_id, role, created_at)
SELECT $7::uuid, id, $1::uuid, 'owner'::member_role, $6::timestamptz FROM tenant
RETURNING tenant_id AS id;
-- plan:
--   Insert on memberships
--     [CTE placed] Result
--     [CTE tenant] Insert on tenants
--       CTE Scan on placed
--     [CTE members_counted] Insert on tenant_counts
--       CTE Scan on tenant tenant_1
--     CTE Scan on tenant
-- generic plan (sent prepared):
--   Insert on memberships
--     [CTE placed] Result
--     [CTE tenant] Insert on tenants
--       CTE Scan on placed
--     [CTE members_counted] Insert on tenant_counts
--       CTE Scan on tenant tenant_1
--     CTE Scan on tenant
