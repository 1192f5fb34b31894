-- Written by packages/server/test/integration/statement-plans.test.ts: the statements each operation sends
-- (in text order), with the shape of their plans on PostgreSQL. UPDATE_STATEMENT_PLANS=1 rewrites the file
-- (docs/development.md).

-- operation: withdrawInvitationsBeyond

DELETE FROM invitations
WHERE invited_by = $1::uuid AND tenant_id = $2::uuid AND NOT (role::text = ANY($3::text[]));
-- plan:
--   Delete on invitations
--     Bitmap Heap Scan on invitations
--       Bitmap Index Scan on invitations_invited_by_tenant_id_idx
