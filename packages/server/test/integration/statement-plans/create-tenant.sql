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

-- operation: createTenant (keyed)

WITH held_key AS (
  SELECT 1 FROM idempotency_keys
  WHERE scope = $1 AND key = $2 AND locked_at = $3::timestamptz
    AND status IS NULL AND result IS NULL
  FOR UPDATE),
  placed AS (SELECT count_new_tenant($4::uuid, $5::int) AS placed WHERE EXISTS (SELECT FROM held_key)),
  tenant AS (
    INSERT INTO tenants (id, name, slug, owner_id, created_at, updated_at)
    SELECT $6::uuid, $7, $8, $4::uuid, $9::timestamptz, $9::timestamptz FROM placed
    WHERE placed
    RETURNING id),
  members_counted AS (
    INSERT INTO tenant_counts (tenant_id, slot, members) SELECT id, counter_slot(), 1 FROM tenant),
recorded_key AS (
  UPDATE idempotency_keys k
  SET result = $10
  FROM tenant
  WHERE k.scope = $1 AND k.key = $2 AND k.locked_at = $3::timestamptz
    AND k.status IS NULL AND k.result IS NULL)
  INSERT INTO memberships (id, tenant_id, user_id, role, created_at)
  SELECT $11::uuid, id, $4::uuid, 'owner'::member_role, $9::timestamptz FROM tenant
  RETURNING tenant_id AS id;
-- plan:
--   Insert on memberships
--     [CTE held_key] LockRows
--       Index Scan using idempotency_keys_pkey on idempotency_keys
--     [CTE placed] Result
--       [InitPlan 2 (returns $2)] CTE Scan on held_key
--     [CTE tenant] Insert on tenants
--       CTE Scan on placed
--     [CTE members_counted] Insert on tenant_counts
--       CTE Scan on tenant tenant_1
--     [CTE recorded_key] Update on idempotency_keys k
--       Nested Loop
--         Index Scan using idempotency_keys_pkey on idempotency_keys k
--         CTE Scan on tenant tenant_2
--     CTE Scan on tenant
-- generic plan (sent prepared):
--   Insert on memberships
--     [CTE held_key] LockRows
--       Index Scan using idempotency_keys_pkey on idempotency_keys
--     [CTE placed] Result
--       [InitPlan 2 (returns $2)] CTE Scan on held_key
--     [CTE tenant] Insert on tenants
--       CTE Scan on placed
--     [CTE members_counted] Insert on tenant_counts
--       CTE Scan on tenant tenant_1
--     [CTE recorded_key] Update on idempotency_keys k
--       Nested Loop
--         Index Scan using idempotency_keys_pkey on idempotency_keys k
--         CTE Scan on tenant tenant_2
--     CTE Scan on tenant

WITH taken AS (
  INSERT INTO idempotency_keys (scope, key, request, body_hash, locked_at, created_at, expires_at)
  VALUES ($1, $2, $3, $4, $5::timestamptz, $5::timestamptz, $6::timestamptz)
  ON CONFLICT (scope, key) DO NOTHING RETURNING 1)
SELECT EXISTS (SELECT FROM taken) AS taken, k.request, k.body_hash AS "bodyHash", k.status,
       k.content_type AS "contentType", k.location, k.body, k.result, k.locked_at AS "lockedAt",
       k.expires_at AS "expiresAt"
FROM (SELECT 1) AS one
LEFT JOIN idempotency_keys k ON NOT EXISTS (SELECT FROM taken) AND k.scope = $1 AND k.key = $2;
-- plan:
--   Nested Loop Left Join
--     [CTE taken] Insert on idempotency_keys
--       Result
--     [InitPlan 2 (returns $2)] CTE Scan on taken
--     [InitPlan 3 (returns $3)] CTE Scan on taken taken_1
--     Result
--     Index Scan using idempotency_keys_pkey on idempotency_keys k
-- generic plan (sent prepared):
--   Nested Loop Left Join
--     [CTE taken] Insert on idempotency_keys
--       Result
--     [InitPlan 2 (returns $2)] CTE Scan on taken
--     [InitPlan 3 (returns $3)] CTE Scan on taken taken_1
--     Result
--     Index Scan using idempotency_keys_pkey on idempotency_keys k
