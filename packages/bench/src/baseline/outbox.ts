import { createHash, createHmac, randomBytes } from 'node:crypto';
import { newId } from '@works-api/prisma';
import type { Sql } from './sql';

// What the server does after a write besides the write itself, done by hand as the baseline does everything: the
// webhook outbox row a change writes, the daily email caps a new request's email takes its place under, the email
// it queues; then, outside the request, the webhook fan-out and the mail sender (claim with answer links, render,
// keep in a dev mailbox as the bench runs the server, record). Written from the schema and the contract, not with
// the server's modules, so that the write scenarios compare like with like (issue 44).

/** A webhook outbox row: its id and the event's JSON as the contract's WebhookEvent has it. */
export function webhookEvent(type: string, tenantId: string, data: unknown, createdAt: Date) {
  const id = newId();
  return { id, body: JSON.stringify({ id, type, createdAt: createdAt.toISOString(), tenantId, data }) };
}

/** The daily caps, as the bench sets them for every process it starts (processes.ts); the server's defaults else. */
export const mailCaps = {
  perRecipient: Number(process.env.MAX_EMAILS_PER_RECIPIENT_PER_DAY ?? 20),
  perTenant: Number(process.env.MAX_EMAILS_PER_TENANT_PER_DAY ?? 1000),
  perAddress: Number(process.env.MAX_EMAILS_PER_ADDRESS_PER_DAY ?? 60),
  perSender: Number(process.env.MAX_EMAILS_PER_SENDER_PER_DAY ?? 500),
};

/** How long after a nudge a loop looks, so that a burst of commits makes one round (as the server's loops do). */
const NUDGE_WINDOW_MS = 10;
const POLL_MS = 1000;
const MAIL_BATCH = 8;
const FAN_OUT_BATCH = 200;
const LEASE_MS = 60_000;
const LINK_TTL_MS = 14 * 24 * 60 * 60 * 1000;
const PUBLIC_URL = process.env.PUBLIC_URL ?? 'http://127.0.0.1:3000';
const STOP_LINK_KEY = randomBytes(32);

/** A loop that runs `round` after a nudge (batched by NUDGE_WINDOW_MS), at every poll, and again while it is busy. */
class Loop {
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private again = false;
  private stopped = false;

  constructor(
    private readonly name: string,
    private readonly round: () => Promise<boolean>,
  ) {}

  start() {
    this.schedule(0);
  }

  nudge() {
    if (this.running) this.again = true;
    else this.schedule(NUDGE_WINDOW_MS);
  }

  stop() {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private schedule(delayMs: number) {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.run(), delayMs);
  }

  private async run() {
    this.running = true;
    let busy = false;
    try {
      busy = await this.round();
    } catch (error) {
      console.error(`baseline: ${this.name} round failed`, error);
    }
    this.running = false;
    const again = busy || this.again;
    this.again = false;
    this.schedule(again ? (busy ? 0 : NUDGE_WINDOW_MS) : POLL_MS);
  }
}

interface ClaimedEmail {
  id: string;
  n: number;
  request_id: string;
  status: string;
  title: string;
  message: string;
  due_at: Date | null;
  recipient_email: string;
  recipient_first_name: string;
  work_name: string;
  tenant_name: string;
  sender_email: string;
  sender_first_name: string;
  sender_last_name: string;
  recipient_id: string | null;
  stopped: boolean;
  linked: boolean;
}

const CLAIM_EMAILS = `WITH due AS (
    SELECT id FROM mail_outbox
    WHERE status = 'queued' AND request_id IS NOT NULL AND next_attempt_at <= $1
    ORDER BY next_attempt_at LIMIT $2 FOR UPDATE SKIP LOCKED),
  claimed AS (
    UPDATE mail_outbox m SET attempts = m.attempts + 1, next_attempt_at = $3 FROM due WHERE m.id = due.id
    RETURNING m.id, m.request_id),
  about AS (
    SELECT c.id, c.request_id, (row_number() OVER (ORDER BY c.id))::int AS n, r.status::text AS status, r.title,
           r.message, r.due_at, r.recipient_email, r.recipient_first_name, r.link_generation, w.name AS work_name,
           t.name AS tenant_name, u.email AS sender_email, u.first_name AS sender_first_name,
           u.last_name AS sender_last_name, mr.id AS recipient_id,
           mr.stopped_at IS NOT NULL OR ma.stopped_at IS NOT NULL AS stopped
    FROM claimed c
    JOIN requests r ON r.id = c.request_id
    JOIN works w ON w.id = r.work_id
    JOIN tenants t ON t.id = w.tenant_id
    JOIN users u ON u.id = r.owner_id
    LEFT JOIN mail_recipients mr ON mr.tenant_id = w.tenant_id AND mr.email = canonical_email(r.recipient_email)
    LEFT JOIN mail_addresses ma ON ma.email = canonical_email(r.recipient_email)),
  linked AS (
    INSERT INTO answer_links (token_hash, request_id, generation, created_at, dev_mailbox)
    SELECT ($4::text[])[a.n], a.request_id, a.link_generation, $1, true FROM about a
    WHERE a.status = 'pending' AND a.recipient_id IS NOT NULL AND NOT a.stopped
    RETURNING token_hash)
  SELECT a.*, EXISTS (SELECT 1 FROM linked l WHERE l.token_hash = ($4::text[])[a.n]) AS linked FROM about a`;

const RECORD_EMAILS = `WITH outcome AS (
    SELECT * FROM unnest($1::uuid[], $2::text[], $3::timestamptz[]) AS o(id, status, at)),
  recorded AS (
    UPDATE mail_outbox m SET status = o.status::mail_status, next_attempt_at = NULL, last_error = NULL,
                             sent_at = CASE WHEN o.status = 'sent' THEN o.at END
    FROM outcome o WHERE m.id = o.id AND m.status = 'queued'
    RETURNING m.request_id, o.status, o.at)
  UPDATE requests r SET email_status = d.status::mail_status,
                        email_sent_at = CASE WHEN d.status = 'sent' THEN d.at ELSE r.email_sent_at END
  FROM recorded d WHERE r.id = d.request_id`;

const FAN_OUT = `WITH batch AS (
    SELECT id, tenant_id, type, ordering_key FROM webhook_events
    WHERE fanned_out_at IS NULL ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED),
  fanned AS (
    INSERT INTO webhook_deliveries (id, endpoint_id, tenant_id, event_id, ordering_key, next_attempt_at, created_at)
    SELECT gen_random_uuid(), e.id, b.tenant_id, b.id, b.ordering_key, $1, $1
    FROM batch b JOIN webhook_endpoints e ON e.tenant_id = b.tenant_id
    WHERE e.enabled AND (coalesce(cardinality(e.event_types), 0) = 0 OR b.type = ANY (e.event_types))
    ON CONFLICT (endpoint_id, event_id) DO NOTHING RETURNING event_id),
  marked AS (UPDATE webhook_events SET fanned_out_at = $1 WHERE id IN (SELECT id FROM batch))
  SELECT (SELECT count(*) FROM batch)::int AS events`;

/** The deliveries due now, as a dispatcher's round looks for them (none in the bench: no endpoint subscribes). */
const DUE_DELIVERIES = `SELECT id FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_at <= $1
  ORDER BY next_attempt_at LIMIT 64 FOR UPDATE SKIP LOCKED`;

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function renderEmail(mail: ClaimedEmail, answerLink: string, stopLink: string) {
  const sender = `${mail.sender_first_name} ${mail.sender_last_name}`.trim() || mail.sender_email;
  const greeting = mail.recipient_first_name ? `Hello ${mail.recipient_first_name},` : 'Hello,';
  const intro = `${sender} (${mail.sender_email}), of "${mail.tenant_name}", sent you a request about "${mail.work_name}". They wrote:`;
  const expires = new Date(Date.now() + LINK_TTL_MS).toUTCString();
  const due = mail.due_at ? `Please answer by ${mail.due_at.toUTCString()}.` : '';
  const text = [
    greeting,
    '',
    intro,
    '',
    ...[mail.title, '', mail.message].map((line) => `> ${line}`),
    ...(due ? ['', due] : []),
    '',
    `Answer here: ${answerLink}`,
    '',
    `You need no account. The link is personal (do not forward this email) and works until ${expires}.`,
    '',
    `Stop these emails: ${stopLink}`,
  ].join('\n');
  const e = escapeHtml;
  const html = `<!doctype html><html><head><meta charset="utf-8"><title>${e(sender)} sent you a request</title></head>
<body style="font-family: sans-serif;"><p>${e(greeting)}</p><p>${e(intro)}</p>
<blockquote><p style="font-weight: 600;">${e(mail.title)}</p><p style="white-space: pre-wrap;">${e(mail.message)}</p></blockquote>
${due ? `<p>${e(due)}</p>` : ''}<p><a href="${e(answerLink)}">Answer the request</a></p>
<p>Or open this address: ${e(answerLink)}<br>The link works until ${e(expires)}.</p>
<p><a href="${e(stopLink)}">Stop these emails</a></p></body></html>`;
  return { to: mail.recipient_email, subject: `${sender} sent you a request`, text, html };
}

/** The webhook fan-out and the mail sender; `nudge` after a commit that wrote their rows. */
export function startOutboxWorkers(sql: Sql) {
  const kept: unknown[] = [];
  let sentCount = 0;

  const mail = new Loop('mail sender', async () => {
    const now = new Date();
    const answers = Array.from({ length: MAIL_BATCH }, () => randomBytes(32).toString('base64url'));
    const hashes = answers.map((token) => createHash('sha256').update(token).digest('hex'));
    const claimed = await sql.query<ClaimedEmail>(CLAIM_EMAILS, [
      now,
      MAIL_BATCH,
      new Date(now.getTime() + LEASE_MS),
      hashes,
    ]);
    const ids: string[] = [];
    const statuses: string[] = [];
    for (const email of claimed) {
      const sendable = email.status === 'pending' && email.linked && email.recipient_id !== null;
      if (sendable) {
        const stopToken = createHmac('sha256', STOP_LINK_KEY).update(email.recipient_id!).digest('base64url');
        const rendered = renderEmail(
          email,
          `${PUBLIC_URL}/r/${answers[email.n - 1]}`,
          `${PUBLIC_URL}/stop/${stopToken}`,
        );
        // The dev mailbox: the last 100 kept in memory, a log line each.
        kept.unshift({ ...rendered, id: String(++sentCount), at: new Date().toISOString() });
        kept.length = Math.min(kept.length, 100);
        console.log(JSON.stringify({ level: 30, time: Date.now(), devMail: { id: sentCount }, msg: 'email kept' }));
      }
      ids.push(email.id);
      statuses.push(sendable ? 'sent' : 'dropped');
    }
    if (ids.length > 0) await sql.query(RECORD_EMAILS, [ids, statuses, ids.map(() => new Date())]);
    return claimed.length === MAIL_BATCH;
  });

  const webhooks = new Loop('webhook fan-out', async () => {
    const now = new Date();
    const [fanned] = await sql.query<{ events: number }>(FAN_OUT, [now, FAN_OUT_BATCH]);
    await sql.transaction((tx) => tx.query(DUE_DELIVERIES, [now]));
    return (fanned?.events ?? 0) === FAN_OUT_BATCH;
  });

  mail.start();
  webhooks.start();
  return {
    nudgeMail: () => mail.nudge(),
    nudgeWebhooks: () => webhooks.nudge(),
    stop() {
      mail.stop();
      webhooks.stop();
    },
  };
}

export type OutboxWorkers = ReturnType<typeof startOutboxWorkers>;
