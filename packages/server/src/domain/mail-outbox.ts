/**
 * The mail outbox (table mail_outbox): emails are queued in the same statement or transaction as the change that
 * causes them and sent by the mail sender (mail/sender.ts) outside the request path, retried with backoff, never
 * lost. A row names what the email is about (a request, an invitation) and its tenant; the sender renders it when
 * it sends it. These are the columns the statements that queue one write, in this order.
 */
export const MAIL_COLUMNS = 'id, kind, tenant_id, request_id, invitation_id, next_attempt_at, created_at';
