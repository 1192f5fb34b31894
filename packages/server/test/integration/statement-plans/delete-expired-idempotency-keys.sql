-- Written by packages/server/test/integration/statement-plans.test.ts: the statements each operation sends
-- (in text order), with the shape of their plans on PostgreSQL. UPDATE_STATEMENT_PLANS=1 rewrites the file
-- (docs/development.md).

-- operation: deleteExpiredIdempotencyKeys

WITH deleted AS (
  DELETE FROM idempotency_keys WHERE ctid = ANY (ARRAY(
    SELECT ctid FROM idempotency_keys WHERE expires_at <= $1::timestamptz ORDER BY expires_at LIMIT $2::int
  ))
  RETURNING 1)
SELECT count(*)::int AS count FROM deleted;
-- plan:
--   Aggregate
--     [CTE deleted] Delete on idempotency_keys idempotency_keys_1
--       [InitPlan 1 (returns $0)] Limit
--         Index Scan using idempotency_keys_expires_at_idx on idempotency_keys
--       Tid Scan on idempotency_keys idempotency_keys_1
--     CTE Scan on deleted
