-- Written by packages/server/test/integration/statement-plans.test.ts: the statements each operation sends
-- (in text order), with the shape of their plans on PostgreSQL. UPDATE_STATEMENT_PLANS=1 rewrites the file
-- (docs/development.md).

-- operation: mail sender round

WITH due AS (
  SELECT id FROM requests
  WHERE status = 'pending' AND reminded_at IS NULL AND due_at IS NOT NULL
    AND due_at > $1::timestamptz AND due_at <= $1::timestamptz + $2::interval
    AND created_at < due_at - $2::interval
    AND ($3::uuid[] IS NULL OR work_id IN (SELECT id FROM works WHERE tenant_id = ANY ($3::uuid[])))
  ORDER BY due_at LIMIT $4 FOR UPDATE SKIP LOCKED),
marked AS (
  UPDATE requests r SET reminded_at = $1::timestamptz FROM due WHERE r.id = due.id RETURNING r.id, r.work_id),
numbered AS (SELECT id, work_id, row_number() OVER () AS n FROM marked)
INSERT INTO mail_outbox (id, kind, tenant_id, request_id, invitation_id, next_attempt_at, created_at)
SELECT ($5::uuid[])[n], 'reminder', w.tenant_id, numbered.id, NULL, $1::timestamptz, $1::timestamptz
FROM numbered JOIN works w ON w.id = numbered.work_id
RETURNING id;
-- plan:
--   Insert on mail_outbox
--     [CTE due] Limit
--       LockRows
--         Index Scan using requests_reminder_due_idx on requests
--           [SubPlan 1] Index Only Scan using works_tenant_id_id_idx on works
--     [CTE marked] Update on requests r
--       Nested Loop
--         CTE Scan on due
--         Index Scan using requests_pkey on requests r
--     Nested Loop
--       WindowAgg
--         CTE Scan on marked
--       Index Scan using works_pkey on works w

WITH outcome AS (
  SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::timestamptz[],
                       $5::boolean[], $6::timestamptz[])
    AS o(id, status, error, retry_at, emails_stopped, at)),
recorded AS (
  UPDATE mail_outbox m
  SET status = CASE WHEN o.status = 'retry' THEN m.status ELSE o.status::mail_status END,
      next_attempt_at = o.retry_at, last_error = o.error,
      sent_at = CASE WHEN o.status = 'sent' THEN o.at END
  FROM outcome o WHERE m.id = o.id AND m.status = 'queued'
  RETURNING m.request_id, m.created_at, m.id, o.status, o.error, o.emails_stopped, o.at),
latest AS (
  SELECT DISTINCT ON (request_id) * FROM recorded
  WHERE request_id IS NOT NULL AND status <> 'retry'
  ORDER BY request_id, created_at DESC, id DESC)
UPDATE requests r
SET email_status = l.status::mail_status,
    email_sent_at = CASE WHEN l.status = 'sent' THEN l.at ELSE r.email_sent_at END,
    email_failure = l.error,
    emails_stopped = r.emails_stopped OR l.emails_stopped
FROM latest l WHERE r.id = l.request_id;
-- plan:
--   Update on requests r
--     [CTE recorded] Update on mail_outbox m
--       Hash Join
--         Bitmap Heap Scan on mail_outbox m
--           Bitmap Index Scan on mail_outbox_due_idx
--         Hash
--           Function Scan on o
--     Nested Loop
--       Subquery Scan on l
--         Unique
--           Sort
--             CTE Scan on recorded
--       Index Scan using requests_pkey on requests r

WITH sign_ins AS (
  SELECT id FROM mail_outbox
  WHERE status = 'queued' AND sign_in_id IS NOT NULL AND next_attempt_at <= $1::timestamptz
    AND ($2::uuid[] IS NULL OR "to" = ANY ($3::text[]))
  ORDER BY next_attempt_at LIMIT $4 FOR UPDATE SKIP LOCKED),
others AS (
  SELECT id FROM mail_outbox
  WHERE status = 'queued' AND sign_in_id IS NULL AND next_attempt_at <= $1::timestamptz
    AND ($2::uuid[] IS NULL OR tenant_id = ANY ($2::uuid[]))
  ORDER BY next_attempt_at LIMIT greatest(0, $4 - (SELECT count(*) FROM sign_ins))
  FOR UPDATE SKIP LOCKED),
due AS (SELECT id FROM sign_ins UNION ALL SELECT id FROM others),
claimed AS (
  UPDATE mail_outbox m SET attempts = m.attempts + 1, next_attempt_at = $5::timestamptz
  FROM due WHERE m.id = due.id
  RETURNING m.id, m.kind, m.tenant_id, m.request_id, m.invitation_id, m.sign_in_id, m."to", m.subject,
            m.text, m.html, m.attempts),
about AS (
  SELECT c.*, (row_number() OVER (ORDER BY c.id))::int AS n, r.status, r.work_id, r.owner_id, r.title,
         r.message, r.due_at, r.recipient_email, r.recipient_first_name, r.recipient_last_name,
         r.link_generation, w.name AS work_name, w.discarded_at IS NOT NULL AS work_discarded,
         i.email AS invitation_email, i.first_name AS invitation_first_name, i.role, i.expires_at,
         coalesce(w.tenant_id, i.tenant_id) AS about_tenant_id, coalesce(r.owner_id, i.invited_by) AS sender_id,
         mr.id AS recipient_id, mr.stopped_at IS NOT NULL OR ma.stopped_at IS NOT NULL AS stopped
  FROM claimed c
  LEFT JOIN requests r ON r.id = c.request_id
  LEFT JOIN works w ON w.id = r.work_id
  LEFT JOIN invitations i ON i.id = c.invitation_id
  LEFT JOIN mail_recipients mr
    ON mr.tenant_id = coalesce(w.tenant_id, i.tenant_id)
   AND mr.email = canonical_email(coalesce(r.recipient_email, i.email))
  LEFT JOIN mail_addresses ma ON ma.email = canonical_email(coalesce(r.recipient_email, i.email))),
linked AS (
  INSERT INTO answer_links (token_hash, request_id, generation, created_at, dev_mailbox)
  SELECT ($6::text[])[a.n], a.request_id, a.link_generation, $7::timestamptz, $8
  FROM about a
  WHERE a.status = 'pending' AND NOT a.work_discarded AND a.recipient_id IS NOT NULL AND NOT a.stopped
  RETURNING token_hash)
SELECT a.id, a.kind, a.tenant_id AS "tenantId", a.request_id AS "requestId", a.invitation_id AS "invitationId",
       a.sign_in_id AS "signInId", a."to", a.subject, a.text, a.html, a.attempts, a.n,
       a.status::text AS status, a.work_id AS "workId", a.owner_id AS "ownerId", a.title, a.message,
       a.due_at AS "dueAt", a.recipient_email AS "recipientEmail",
       a.recipient_first_name AS "recipientFirstName", a.recipient_last_name AS "recipientLastName",
       a.work_name AS "workName", a.work_discarded AS "workDiscarded", a.invitation_email AS "invitationEmail",
       a.invitation_first_name AS "invitationFirstName", a.role::text AS role, a.expires_at AS "expiresAt",
       a.about_tenant_id AS "aboutTenantId", t.name AS "tenantName", u.email AS "senderEmail",
       u.first_name AS "senderFirstName", u.last_name AS "senderLastName", a.recipient_id AS "recipientId",
       a.stopped, EXISTS (SELECT 1 FROM linked l WHERE l.token_hash = ($6::text[])[a.n]) AS linked
FROM about a
LEFT JOIN tenants t ON t.id = a.about_tenant_id
LEFT JOIN users u ON u.id = a.sender_id;
-- plan:
--   Nested Loop Left Join
--     [CTE sign_ins] Limit
--       LockRows
--         Index Scan using mail_outbox_sign_in_due_idx on mail_outbox
--     [CTE others] Limit
--       [InitPlan 2 (returns $2)] Aggregate
--         CTE Scan on sign_ins
--       LockRows
--         Index Scan using mail_outbox_due_idx on mail_outbox mail_outbox_1
--     [CTE claimed] Update on mail_outbox m
--       Nested Loop
--         Append
--           CTE Scan on sign_ins sign_ins_1
--           CTE Scan on others
--         Index Scan using mail_outbox_pkey on mail_outbox m
--     [CTE about] WindowAgg
--       Sort
--         Nested Loop Left Join
--           Nested Loop Left Join
--             Nested Loop Left Join
--               Nested Loop Left Join
--                 Nested Loop Left Join
--                   CTE Scan on claimed c
--                   Index Scan using requests_pkey on requests r
--                 Index Scan using works_pkey on works w
--               Index Scan using invitations_pkey on invitations i
--             Index Scan using mail_recipients_pkey on mail_recipients mr
--           Index Scan using mail_addresses_pkey on mail_addresses ma
--     [CTE linked] Insert on answer_links
--       CTE Scan on about a_1
--     Hash Right Join
--       Seq Scan on users u
--       Hash
--         CTE Scan on about a
--     Index Scan using tenants_pkey on tenants t
--     [SubPlan 8] CTE Scan on linked l
