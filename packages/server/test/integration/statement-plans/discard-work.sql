-- Written by packages/server/test/integration/statement-plans.test.ts: the statements each operation sends
-- (in text order), with the shape of their plans on PostgreSQL. UPDATE_STATEMENT_PLANS=1 rewrites the file
-- (docs/development.md).

-- operation: discardWork

SELECT role::text AS role FROM memberships WHERE tenant_id = $1::uuid AND user_id = $2::uuid;
-- plan:
--   Bitmap Heap Scan on memberships
--     Bitmap Index Scan on memberships_tenant_id_user_id_key
-- generic plan (sent prepared):
--   Index Scan using memberships_tenant_id_id_idx on memberships

SELECT w.id, w.slug, w.name, w.description, w.created_at AS "createdAt", w.updated_at AS "updatedAt",
                 w.discarded_at AS "discardedAt", u.email AS "ownerEmail", u.first_name AS "ownerFirstName", u.last_name AS "ownerLastName" FROM works w JOIN users u ON u.id = w.owner_id
WHERE w.id = $1::uuid AND w.tenant_id = $2::uuid;
-- plan:
--   Merge Join
--     Index Scan using users_pkey on users u
--     Sort
--       Index Scan using works_tenant_id_id_idx on works w
-- generic plan (sent prepared):
--   Merge Join
--     Index Scan using users_pkey on users u
--     Sort
--       Index Scan using works_tenant_id_id_idx on works w

WITH changed AS (
  UPDATE works SET discarded_at = $1::timestamptz, updated_at = $2::timestamptz
  WHERE id = $3::uuid AND tenant_id = $4::uuid AND updated_at = $5::timestamptz
    AND discarded_at IS NULL
  RETURNING id)
INSERT INTO webhook_events (id, tenant_id, type, ordering_key, endpoint_id, body, created_at) SELECT $6::uuid, $7::uuid, $8::text, $9::uuid, $10::uuid, $11::text, $12::timestamptz FROM changed RETURNING id;
-- plan:
--   Insert on webhook_events
--     [CTE changed] Update on works
--       Index Scan using works_kept_tenant_id_id_idx on works
--     CTE Scan on changed
