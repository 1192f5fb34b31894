-- Written by packages/server/test/integration/statement-plans.test.ts: the statements each operation sends
-- (in text order), with the shape of their plans on PostgreSQL. UPDATE_STATEMENT_PLANS=1 rewrites the file
-- (docs/development.md).

-- operation: take_mail_allowance (a tenant's daily count)

SELECT coalesce(sum(sent) FILTER (WHERE day = $2::date), 0) FROM tenant_mail_days WHERE tenant_id = $1::uuid;
-- plan:
--   Aggregate
--     Bitmap Heap Scan on tenant_mail_days
--       Bitmap Index Scan on tenant_mail_days_pkey

-- operation: take_mail_allowance (a sender's daily count)

SELECT coalesce(sum(sent) FILTER (WHERE day = $2::date), 0) FROM user_mail_days WHERE user_id = $1::uuid;
-- plan:
--   Aggregate
--     Bitmap Heap Scan on user_mail_days
--       Bitmap Index Scan on user_mail_days_pkey

-- operation: take_mail_allowance (the address's stop)

SELECT a.stopped_at IS NOT NULL FROM mail_addresses a WHERE a.email = canonical_email($1);
-- plan:
--   Index Scan using mail_addresses_pkey on mail_addresses a

-- operation: take_mail_allowance (the address's count)

INSERT INTO mail_addresses AS a (email, day, sent) SELECT canonical_email($1), $2::date, 1
ON CONFLICT (email) DO UPDATE SET day = $2::date, sent = CASE WHEN a.day = $2::date THEN a.sent + 1 ELSE 1 END
WHERE a.stopped_at IS NULL AND (a.day <> $2::date OR a.sent < 1000000);
-- plan:
--   Insert on mail_addresses a
--     Result
