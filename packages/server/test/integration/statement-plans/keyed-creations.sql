-- Written by packages/server/test/integration/statement-plans.test.ts: the statements each operation sends
-- (in text order), with the shape of their plans on PostgreSQL. UPDATE_STATEMENT_PLANS=1 rewrites the file
-- (docs/development.md).

-- operation: keyed creations: the held key and its outcome by the key table's primary key, with the effect #1

INSERT INTO "public"."idempotency_keys" ("scope","key","request","body_hash","status","content_type","location","body","locked_at","created_at","expires_at") VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11) ON CONFLICT DO NOTHING;
-- plan:
--   Insert on idempotency_keys
--     Result

WITH held_key AS (
  SELECT 1 FROM idempotency_keys
  WHERE scope = $1 AND key = $2 AND locked_at = $3::timestamptz AND status IS NULL
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
  UPDATE idempotency_keys k SET status = $10::int, content_type = $11,
    location = $12,
    body = $13
  FROM tenant
  WHERE k.scope = $1 AND k.key = $2 AND k.locked_at = $3::timestamptz
    AND k.status IS NULL)
INSERT INTO memberships (id, tenant_id, user_id, role, created_at)
SELECT $14::uuid, id, $4::uuid, 'owner'::member_role, $9::timestamptz FROM tenant
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

-- operation: keyed creations: the held key and its outcome by the key table's primary key, with the effect #2

INSERT INTO "public"."idempotency_keys" ("scope","key","request","body_hash","status","content_type","location","body","locked_at","created_at","expires_at") VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11) ON CONFLICT DO NOTHING;
-- plan:
--   Insert on idempotency_keys
--     Result

WITH held_key AS (
  SELECT 1 FROM idempotency_keys
  WHERE scope = $1 AND key = $2 AND locked_at = $3::timestamptz AND status IS NULL
  FOR UPDATE),
work AS (
  INSERT INTO works (id, tenant_id, slug, name, description, owner_id, created_at, updated_at, search)
  SELECT $4::uuid, $5::uuid, $6, $7, $8, $9::uuid,
         $10::timestamptz, $10::timestamptz, $11
  WHERE EXISTS (SELECT 1 FROM memberships WHERE tenant_id = $5::uuid AND user_id = $9::uuid
 AND role IN ('member', 'admin', 'owner')) AND EXISTS (SELECT FROM held_key)
  RETURNING id),
recorded_key AS (
  UPDATE idempotency_keys k SET status = $12::int, content_type = $13,
    location = $14,
    body = $15
  FROM work
  WHERE k.scope = $1 AND k.key = $2 AND k.locked_at = $3::timestamptz
    AND k.status IS NULL)
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

-- operation: keyed creations: the held key and its outcome by the key table's primary key, with the effect #3

INSERT INTO "public"."idempotency_keys" ("scope","key","request","body_hash","status","content_type","location","body","locked_at","created_at","expires_at") VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11) ON CONFLICT DO NOTHING;
-- plan:
--   Insert on idempotency_keys
--     Result

WITH held_key AS (
    SELECT 1 FROM idempotency_keys
    WHERE scope = $1 AND key = $2 AND locked_at = $3::timestamptz AND status IS NULL
    FOR UPDATE),
work AS (
  SELECT w.id FROM works w
  WHERE w.id = $4::uuid AND w.tenant_id = $5::uuid AND w.discarded_at IS NULL
    AND EXISTS (SELECT 1 FROM memberships WHERE tenant_id = $5::uuid AND user_id = $6::uuid
   AND role IN ('member', 'admin', 'owner')) AND EXISTS (SELECT FROM held_key)
  FOR SHARE),
allowance AS (SELECT take_mail_allowance($7::uuid, $8::uuid, $9::text, $10::date, $11::uuid, $12::int, $13::int, $14::int, $15::int, $16::boolean) AS stopped FROM work),
created AS (
  INSERT INTO requests (id, work_id, title, message, recipient_email, recipient_first_name,
                        recipient_last_name, due_at, owner_id, created_at, updated_at, email_status,
                        email_failure, emails_stopped, tenant_id, search)
  SELECT $17::uuid, work.id, $18, $19, $20, $21,
         $22, $23::timestamptz, $6::uuid, $24::timestamptz, $24::timestamptz,
         CASE WHEN a.stopped THEN 'dropped' ELSE 'queued' END::mail_status,
         CASE WHEN a.stopped THEN $25 END, a.stopped, $5::uuid, $26
  FROM work, allowance a
  RETURNING id, emails_stopped),
  recorded_key AS (
    UPDATE idempotency_keys k SET status = $27::int, content_type = $28,
      location = $29,
      body = CASE WHEN emails_stopped THEN $30 ELSE $31 END
    FROM created
    WHERE k.scope = $1 AND k.key = $2 AND k.locked_at = $3::timestamptz
      AND k.status IS NULL),
-- Counted here, pending in the work's count slot of this session (see counts.ts), only when inserted.
counted AS (
  INSERT INTO work_counts AS c (work_id, slot, pending)
  SELECT $4::uuid, counter_slot(), 1 FROM created
  ON CONFLICT (work_id, slot) DO UPDATE SET pending = c.pending + 1),
mailed AS (
  INSERT INTO mail_outbox (id, kind, tenant_id, request_id, invitation_id, next_attempt_at, created_at)
  SELECT $32::uuid, 'request', $5::uuid, id, NULL, $24::timestamptz, $24::timestamptz FROM created
  WHERE NOT emails_stopped)
INSERT INTO webhook_events (id, tenant_id, type, ordering_key, endpoint_id, body, created_at)
SELECT $33::uuid, $34::uuid, $35::text, $36::uuid, $37::uuid, CASE WHEN created.emails_stopped THEN $38 ELSE $39::text END, $40::timestamptz
FROM created RETURNING (SELECT emails_stopped FROM created) AS stopped;
-- plan:
--   Insert on webhook_events
--     [CTE held_key] LockRows
--       Index Scan using idempotency_keys_pkey on idempotency_keys
--     [CTE work] LockRows
--       [InitPlan 2 (returns $2)] Index Scan using memberships_user_id_tenant_id_idx on memberships
--       [InitPlan 3 (returns $3)] CTE Scan on held_key
--       Result
--         Index Scan using works_kept_tenant_id_id_idx on works w
--     [CTE allowance] CTE Scan on work
--     [CTE created] Insert on requests
--       Nested Loop
--         CTE Scan on work work_1
--         CTE Scan on allowance a
--     [CTE recorded_key] Update on idempotency_keys k
--       Nested Loop
--         Index Scan using idempotency_keys_pkey on idempotency_keys k
--         CTE Scan on created created_1
--     [CTE counted] Insert on work_counts c
--       CTE Scan on created created_2
--     [CTE mailed] Insert on mail_outbox
--       CTE Scan on created created_3
--     [InitPlan 10 (returns $15)] CTE Scan on created created_4
--     CTE Scan on created
-- generic plan (sent prepared):
--   Insert on webhook_events
--     [CTE held_key] LockRows
--       Index Scan using idempotency_keys_pkey on idempotency_keys
--     [CTE work] LockRows
--       [InitPlan 2 (returns $2)] Index Scan using memberships_tenant_id_id_idx on memberships
--       [InitPlan 3 (returns $3)] CTE Scan on held_key
--       Result
--         Index Scan using works_kept_tenant_id_id_idx on works w
--     [CTE allowance] CTE Scan on work
--     [CTE created] Insert on requests
--       Nested Loop
--         CTE Scan on work work_1
--         CTE Scan on allowance a
--     [CTE recorded_key] Update on idempotency_keys k
--       Nested Loop
--         Index Scan using idempotency_keys_pkey on idempotency_keys k
--         CTE Scan on created created_1
--     [CTE counted] Insert on work_counts c
--       CTE Scan on created created_2
--     [CTE mailed] Insert on mail_outbox
--       CTE Scan on created created_3
--     [InitPlan 10 (returns $15)] CTE Scan on created created_4
--     CTE Scan on created
