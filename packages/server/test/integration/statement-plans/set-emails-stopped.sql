-- Written by packages/server/test/integration/statement-plans.test.ts: the statements each operation sends
-- (in text order), with the shape of their plans on PostgreSQL. UPDATE_STATEMENT_PLANS=1 rewrites the file
-- (docs/development.md).

-- operation: setEmailsStopped (the tenant and the service, on and off)

INSERT INTO mail_addresses AS a (email, day, sent, stopped_at)
SELECT canonical_email(l.email), l.day, 0, CASE WHEN $1 THEN now() END
FROM mail_recipients l WHERE l.id = $2::uuid
ON CONFLICT (email) DO UPDATE SET stopped_at = CASE WHEN $1 THEN coalesce(a.stopped_at, now()) END
RETURNING a.email;
-- plan:
--   Insert on mail_addresses a
--     Index Scan using mail_recipients_id_key on mail_recipients l

INSERT INTO mail_addresses AS a (email, day, sent, stopped_at)
SELECT canonical_email(l.email), l.day, 0, CASE WHEN $1 THEN now() END
FROM mail_recipients l WHERE l.id = $2::uuid
ON CONFLICT (email) DO UPDATE SET stopped_at = CASE WHEN $1 THEN coalesce(a.stopped_at, now()) END
RETURNING a.email;
-- plan:
--   Insert on mail_addresses a
--     Index Scan using mail_recipients_id_key on mail_recipients l

INSERT INTO mail_recipients AS r (tenant_id, email, id, day, sent, stopped_at)
SELECT l.tenant_id, canonical_email(l.email), $1::uuid, l.day, 0, CASE WHEN $2 THEN now() END
FROM mail_recipients l WHERE l.id = $3::uuid
ON CONFLICT (tenant_id, email) DO UPDATE
SET stopped_at = CASE WHEN $2 THEN coalesce(r.stopped_at, now()) END
RETURNING r.id;
-- plan:
--   Insert on mail_recipients r
--     Index Scan using mail_recipients_id_key on mail_recipients l

INSERT INTO mail_recipients AS r (tenant_id, email, id, day, sent, stopped_at)
SELECT l.tenant_id, canonical_email(l.email), $1::uuid, l.day, 0, CASE WHEN $2 THEN now() END
FROM mail_recipients l WHERE l.id = $3::uuid
ON CONFLICT (tenant_id, email) DO UPDATE
SET stopped_at = CASE WHEN $2 THEN coalesce(r.stopped_at, now()) END
RETURNING r.id;
-- plan:
--   Insert on mail_recipients r
--     Index Scan using mail_recipients_id_key on mail_recipients l
