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

-- operation: createWork (keyed)

WITH held_key AS (
  SELECT 1 FROM idempotency_keys
  WHERE scope = $1 AND key = $2 AND locked_at = $3::timestamptz
    AND status IS NULL AND result IS NULL
  FOR UPDATE),
  work AS (
    INSERT INTO works (id, tenant_id, slug, name, description, owner_id, created_at, updated_at, search)
    SELECT $4::uuid, $5::uuid, $6, $7, $8, $9::uuid,
           $10::timestamptz, $10::timestamptz, $11
    WHERE EXISTS (SELECT 1 FROM memberships WHERE tenant_id = $5::uuid AND user_id = $9::uuid
   AND role IN ('member', 'admin', 'owner')) AND EXISTS (SELECT FROM held_key)
    RETURNING id),
recorded_key AS (
  UPDATE idempotency_keys k
  SET result = $12
  FROM work
  WHERE k.scope = $1 AND k.key = $2 AND k.locked_at = $3::timestamptz
    AND k.status IS NULL AND k.result IS NULL)
  SELECT id FROM work;
-- plan:
--   CTE Scan on work
--     [CTE held_key] LockRows
--       Index Scan using idempotency_keys_pkey on idempotency_keys
--     [CTE work] Insert on works
--       [InitPlan 2 (returns $2)] Index Scan using memberships_user_id_tenant_id_idx on memberships
--       [InitPlan 3 (returns $3)] CTE Scan on held_key
--       Result
--     [CTE recorded_key] Update on idempotency_keys k
--       Nested Loop
--         Index Scan using idempotency_keys_pkey on idempotency_keys k
--         CTE Scan on work work_1
-- generic plan (sent prepared):
--   CTE Scan on work
--     [CTE held_key] LockRows
--       Index Scan using idempotency_keys_pkey on idempotency_keys
--     [CTE work] Insert on works
--       [InitPlan 2 (returns $2)] Index Scan using memberships_tenant_id_id_idx on memberships
--       [InitPlan 3 (returns $3)] CTE Scan on held_key
--       Result
--     [CTE recorded_key] Update on idempotency_keys k
--       Nested Loop
--         Index Scan using idempotency_keys_pkey on idempotency_keys k
--         CTE Scan on work work_1

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
