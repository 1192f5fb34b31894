-- Written by packages/server/test/integration/statement-plans.test.ts: the statements each operation sends
-- (in text order), with the shape of their plans on PostgreSQL. UPDATE_STATEMENT_PLANS=1 rewrites the file
-- (docs/development.md).

-- operation: findStopLinkState

SELECT t.name AS "tenantName", canonical_email(l.email) AS email,
       CASE WHEN r.id IS NULL THEN l.stopped_at IS NOT NULL ELSE r.stopped_at IS NOT NULL END AS stopped,
       a.stopped_at IS NOT NULL AS "stoppedEverywhere"
FROM mail_recipients l
JOIN tenants t ON t.id = l.tenant_id
LEFT JOIN mail_recipients r ON r.tenant_id = l.tenant_id AND r.email = canonical_email(l.email)
LEFT JOIN mail_addresses a ON a.email = canonical_email(l.email)
WHERE l.id = $1::uuid;
-- plan:
--   Nested Loop Left Join
--     Nested Loop Left Join
--       Merge Join
--         Index Scan using tenants_pkey on tenants t
--         Sort
--           Index Scan using mail_recipients_id_key on mail_recipients l
--       Index Scan using mail_recipients_pkey on mail_recipients r
--     Index Scan using mail_addresses_pkey on mail_addresses a
