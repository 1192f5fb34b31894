import type { Db } from '../db/client';
import { outboxSignal } from '../db/outbox-signal';
import { newId } from '../db/ids';
import { plainQuery } from '../db/plain-statement';

/**
 * The mail outbox (table mail_outbox): emails are queued in the same statement or transaction as the change that
 * causes them and sent by the mail sender (mail/sender.ts) outside the request path, retried with backoff, never
 * lost. Request emails are queued by the request statements themselves (domain/requests) with these columns.
 */
export const MAIL_COLUMNS = 'id, kind, request_id, next_attempt_at, created_at';

/** An email whose content is known when it is queued (it must hold no secret: it is stored as it is). */
export interface PlainMail {
  /** What it is, for logs and metrics: `invitation`, ... (`request` and `reminder` are the request emails). */
  kind: string;
  to: string;
  subject: string;
  text: string;
  html: string;
}

/**
 * Queues an email on `db`, which may be a transaction's client (then it is sent only if that commits). For other
 * features' mail (e.g. invitations); returns the message id.
 */
export async function enqueueMail(db: Db, mail: PlainMail, now = new Date()): Promise<string> {
  const id = newId();
  await plainQuery(
    db,
    `INSERT INTO mail_outbox (id, kind, "to", subject, text, html, next_attempt_at, created_at)
     VALUES ($1::uuid, $2, $3, $4, $5, $6, $7::timestamptz, $7::timestamptz)`,
    [id, mail.kind, mail.to, mail.subject, mail.text, mail.html, now.toISOString()],
  );
  signalMailQueued(db);
  return id;
}

/** Wakes this process's mail sender at once (others find the row by polling), as webhooks' outbox does. */
export const { on: onMailQueued, signal: signalMailQueued } = outboxSignal();
