-- Hand-written: a sign-in email goes out before the tenants' emails that are due with it. A person waits at the
-- sign-in page for it, and a bulk send (issue 41) queues up to 1,000 request emails at once: claimed oldest first,
-- the sign-in email waited behind every one of them. The sender now claims the due sign-in emails first, then
-- fills its claim with the rest; this index finds the due sign-in emails without walking the other queued rows
-- (mail_outbox_due_idx holds every queued row, sign-in or not).
CREATE INDEX "mail_outbox_sign_in_due_idx" ON "mail_outbox"("next_attempt_at")
  WHERE "status" = 'queued' AND "sign_in_id" IS NOT NULL;
