-- Written by packages/server/test/integration/statement-plans.test.ts: the statements each operation sends
-- (in text order), with the shape of their plans on PostgreSQL. UPDATE_STATEMENT_PLANS=1 rewrites the file
-- (docs/development.md).

-- operation: acceptInvitation (the member counted)

WITH added (tenant_id, user_id) AS (VALUES ($1::uuid, $2::uuid)),
members_counted AS (
  INSERT INTO tenant_counts AS c (tenant_id, slot, members)
  SELECT tenant_id, counter_slot(), count(*) FROM added GROUP BY tenant_id ORDER BY tenant_id
  ON CONFLICT (tenant_id, slot) DO UPDATE SET members = c.members + excluded.members),
memberships_counted AS (
  INSERT INTO user_counts AS c (user_id, slot, memberships)
  SELECT user_id, counter_slot(), count(*) FROM added GROUP BY user_id ORDER BY user_id
  ON CONFLICT (user_id, slot) DO UPDATE SET memberships = c.memberships + excluded.memberships) SELECT 1;
-- plan:
--   Result
--     [CTE added] Result
--     [CTE members_counted] Insert on tenant_counts c
--       Subquery Scan on *SELECT*
--         GroupAggregate
--           Sort
--             CTE Scan on added
--     [CTE memberships_counted] Insert on user_counts c_1
--       Subquery Scan on *SELECT*_1
--         GroupAggregate
--           Sort
--             CTE Scan on added added_1
