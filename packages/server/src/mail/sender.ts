import type { Db } from '@works-api/prisma';
import { OutboxLoop } from '../outbox-loop';
import { newId } from '@works-api/prisma';
import { namedQuery, type StatementParams } from '@works-api/prisma';
import type { MailMessage } from '@works-api/prisma/client';
import { secretBoxOf } from '@works-api/prisma';
import { DEFAULT_LIMITS } from '../domain/limits';
import { EMAILS_STOPPED, utcDay } from '../domain/mail-caps';
import { stopLinkToken } from '../domain/recipients/stop-links';
import { newAnswerToken } from '../domain/recipients/tokens';
import { userRecord } from '../domain/users/present';
import { retryDelayMs } from '../domain/webhooks/backoff';
import type { Logger } from '../observability/logger';
import { MAIL_COLUMNS } from '../domain/mail-outbox';
import { type RenderedMail, renderInvitationMail, renderRequestMail } from './render';
import type { MailOrigin, MailTransport, SendOutcome } from './transport';

export interface MailSenderOptions {
  db: Db;
  logger: Logger;
  transport: MailTransport;
  /** `MAIL_FROM`: the From header of every email. */
  from: string;
  /** `PUBLIC_URL`: where recipients reach this service; links are `<publicUrl>/r/<token>` and `<publicUrl>/console/…`. */
  publicUrl: string;
  /** `REMINDER_BEFORE`: a pending request with a due date gets one reminder this long before it. */
  reminderBeforeMs: number;
  /** `ANSWER_LINK_TTL`: how long the answer link of an email works (the email says until when). */
  answerLinkTtlMs?: number;
  pollIntervalMs?: number;
  /** Emails being sent at once. */
  maxInFlight?: number;
  /** Injectable for tests: the time (what is due, what is reminded) and the retry jitter. */
  clock?: () => Date;
  random?: () => number;
  /** Called with each finished attempt (metrics). */
  onAttempt?: (outcome: 'sent' | 'retry' | 'failed' | 'dropped') => void;
  /**
   * Send (and remind) only these tenants' request emails. For tests that share one PostgreSQL database, where each
   * test's sender must send its own tenants' emails (with its own clock) and leave the others' alone.
   */
  onlyTenants?: () => readonly string[];
}

type Claimed = Pick<
  MailMessage,
  'id' | 'kind' | 'tenantId' | 'requestId' | 'invitationId' | 'to' | 'subject' | 'text' | 'html' | 'attempts'
> & {
  /** Real time (Date.now()) until which the claim holds: its lease, read on this process's clock. */
  leaseEndsAt: number;
};

/** A claimed email is this process's for this long: one killed mid-send leaves it due again afterwards. */
export const LEASE_MS = 60_000;
/** How often an attempt's outcome is written again while the database is away (within the lease). */
const RECORD_RETRY_MS = 1_000;
const REMINDER_BATCH = 100;

/**
 * Sends the mail outbox, outside the request path. Each round: queue the reminders that have come due, then claim
 * due emails (`FOR UPDATE SKIP LOCKED`, with a lease) and send them. Every server process runs one (as may
 * `pnpm worker`); they share the work through the database. An email is marked sent right after the mail server
 * accepts it, so a restart never sends it again; only a process killed between the server's acceptance and that
 * update (milliseconds) leaves one to be sent twice, after its lease. Failed attempts are retried with the
 * webhooks' backoff (about 3 days); a permanent failure, or the last attempt, is recorded on the request.
 */
export class MailSender {
  private readonly options: Required<Omit<MailSenderOptions, 'onAttempt' | 'onlyTenants'>> &
    Pick<MailSenderOptions, 'onAttempt' | 'onlyTenants'>;
  private readonly loop: OutboxLoop;
  private unsubscribe: (() => void) | undefined;

  constructor(options: MailSenderOptions) {
    this.options = {
      answerLinkTtlMs: DEFAULT_LIMITS.answerLinkTtlMs,
      pollIntervalMs: 1000,
      maxInFlight: 8,
      clock: () => new Date(),
      random: Math.random,
      ...options,
    };
    this.loop = new OutboxLoop({
      pollIntervalMs: this.options.pollIntervalMs,
      maxInFlight: this.options.maxInFlight,
      round: () => this.round(),
      onRoundError: (error, failing) =>
        this.options.logger.warn({ err: error, ...failing }, 'mail: sender round failed; retrying at every poll'),
      onResumed: (failed) => this.options.logger.info(failed, 'mail: sender resumed'),
    });
  }

  get description(): string {
    return this.options.transport.description;
  }

  start(): this {
    this.unsubscribe = this.options.db.outbox.mail.on(() => this.nudge());
    this.loop.start();
    return this;
  }

  nudge(): void {
    this.loop.nudge();
  }

  /** One round, waiting for every send it starts (tests drive the clock with it). Returns how many it claimed. */
  async runOnce(): Promise<number> {
    await this.queueReminders();
    const claimed = await this.claim(this.options.maxInFlight);
    await Promise.all(claimed.map((mail) => this.send(mail)));
    return claimed.length;
  }

  /** Stops claiming and waits (up to `timeoutMs`) for the sends in flight. True when they all finished. */
  async stop(timeoutMs: number): Promise<boolean> {
    this.unsubscribe?.();
    const inTime = await this.loop.stop(timeoutMs);
    this.options.transport.close();
    return inTime;
  }

  /** Reminders due, then as many queued emails as there is room for. Busy when it filled the room. */
  private async round(): Promise<boolean> {
    await this.queueReminders();
    const free = this.loop.free;
    if (free <= 0) return false;
    const claimed = await this.claim(free);
    for (const mail of claimed) this.loop.track(this.send(mail));
    return claimed.length === free;
  }

  private run<Row>(sql: string, params: StatementParams): Promise<Row[]> {
    return namedQuery<Row>(this.options.db, sql, params);
  }

  /**
   * Queues the one reminder of each pending request whose due date is within `reminderBeforeMs` (and still
   * ahead), in bounded batches, marking the request in the same statement: exactly once, whichever process
   * gets there first. A request created already inside that window gets none (its first email is as recent).
   */
  async queueReminders(): Promise<number> {
    const now = this.options.clock();
    const before = `${this.options.reminderBeforeMs / 1000} seconds`;
    const ids = Array.from({ length: REMINDER_BATCH }, () => newId());
    const rows = await this.run<{ id: string }>(
      `WITH due AS (
         SELECT id FROM requests
         WHERE status = 'pending' AND reminded_at IS NULL AND due_at IS NOT NULL
           AND due_at > :now::timestamptz AND due_at <= :now::timestamptz + :before::interval
           AND created_at < due_at - :before::interval
           AND (:onlyTenants::uuid[] IS NULL OR work_id IN (SELECT id FROM works WHERE tenant_id = ANY (:onlyTenants::uuid[])))
         ORDER BY due_at LIMIT :batch FOR UPDATE SKIP LOCKED),
       marked AS (
         UPDATE requests r SET reminded_at = :now::timestamptz FROM due WHERE r.id = due.id RETURNING r.id, r.work_id),
       numbered AS (SELECT id, work_id, row_number() OVER () AS n FROM marked)
       INSERT INTO mail_outbox (${MAIL_COLUMNS})
       SELECT (:mailIds::uuid[])[n], 'reminder', w.tenant_id, numbered.id, NULL, :now::timestamptz, :now::timestamptz
       FROM numbered JOIN works w ON w.id = numbered.work_id
       RETURNING id`,
      {
        now: now.toISOString(),
        before,
        batch: REMINDER_BATCH,
        mailIds: ids,
        onlyTenants: this.options.onlyTenants?.() ?? null,
      },
    );
    if (rows.length > 0) this.options.logger.info({ reminders: rows.length }, 'mail: reminders queued');
    return rows.length;
  }

  private async claim(limit: number): Promise<Claimed[]> {
    if (this.loop.stopped || limit <= 0) return [];
    const now = this.options.clock();
    const leaseEndsAt = Date.now() + LEASE_MS;
    const claimed = await this.run<Omit<Claimed, 'leaseEndsAt'>>(
      `WITH due AS (
         SELECT id FROM mail_outbox WHERE status = 'queued' AND next_attempt_at <= :now::timestamptz
           AND (:onlyTenants::uuid[] IS NULL OR tenant_id = ANY (:onlyTenants::uuid[]))
         ORDER BY next_attempt_at LIMIT :limit FOR UPDATE SKIP LOCKED)
       UPDATE mail_outbox m SET attempts = m.attempts + 1, next_attempt_at = :leaseEnds::timestamptz
       FROM due WHERE m.id = due.id
       RETURNING m.id, m.kind, m.tenant_id AS "tenantId", m.request_id AS "requestId",
                 m.invitation_id AS "invitationId", m."to", m.subject, m.text, m.html, m.attempts`,
      {
        now: now.toISOString(),
        leaseEnds: new Date(now.getTime() + LEASE_MS).toISOString(),
        limit,
        onlyTenants: this.options.onlyTenants?.() ?? null,
      },
    );
    return claimed.map((mail) => ({ ...mail, leaseEndsAt }));
  }

  private async send(mail: Claimed): Promise<void> {
    try {
      const rendered = mail.requestId
        ? await this.renderRequestMail(mail)
        : mail.invitationId
          ? await this.renderInvitationMail(mail.invitationId)
          : plainContent(mail);
      if (rendered === 'stopped') return await this.finish(mail, 'dropped', EMAILS_STOPPED, { emailsStopped: true });
      if (!rendered) return await this.finish(mail, 'dropped');
      const { origin, ...content } = rendered;
      const outcome = await this.options.transport.send({ ...content, from: this.options.from }, origin);
      await this.recordWithinLease(mail, outcome);
    } catch (error) {
      // Not recorded: the lease runs out and the email is tried again.
      this.options.logger.warn({ err: error, mailId: mail.id }, 'mail: sending failed');
    }
  }

  /**
   * Records what the mail server said. The email has gone: if the database is away (failing over), the record is
   * written again every second while the lease holds, so that a short outage sends nothing twice; only past the
   * lease is the email sent again (at least once).
   */
  private async recordWithinLease(mail: Claimed, outcome: SendOutcome): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.record(mail, outcome);
      } catch (error) {
        if (Date.now() + RECORD_RETRY_MS >= mail.leaseEndsAt || this.loop.stopped) throw error;
        if (attempt === 1)
          this.options.logger.warn(
            { err: error, mailId: mail.id },
            'mail: recording the outcome failed; retrying while the lease holds',
          );
        await new Promise((resolve) => setTimeout(resolve, RECORD_RETRY_MS));
      }
    }
  }

  /**
   * The address's row of the tenant (what its stop link names), made now for an email queued before there were
   * such rows; `stopped` when the address stopped the tenant's emails. One primary-key read, as a rule.
   */
  private async recipientOf(tenantId: string, email: string): Promise<{ stopLink: string; stopped: boolean }> {
    const [row] = await this.run<{ id: string; stopped: boolean }>(
      `WITH made AS (
         INSERT INTO mail_recipients (tenant_id, email, id, day, sent) VALUES (:tenantId::uuid, :email, :recipientId::uuid, :day::date, 0)
         ON CONFLICT (tenant_id, email) DO NOTHING RETURNING id, stopped_at)
       SELECT id, stopped_at IS NOT NULL AS stopped FROM made
       UNION ALL
       SELECT id, stopped_at IS NOT NULL FROM mail_recipients WHERE tenant_id = :tenantId::uuid AND email = :email
       LIMIT 1`,
      { tenantId, email, recipientId: newId(), day: utcDay(this.options.clock()) },
    );
    if (!row) throw new Error('the recipient row was written by a concurrent sender: try again after the lease');
    const token = stopLinkToken(secretBoxOf(this.options.db), row.id);
    return { stopLink: `${this.options.publicUrl}/stop/${token}`, stopped: row.stopped };
  }

  /**
   * Renders a request's email with a new answer link, whose hash is stored first (with the request's current link
   * generation, read in the same statement). Null when the request no longer takes an answer: nothing to send;
   * `stopped` when its recipient stopped the tenant's emails (then no link is made).
   */
  private async renderRequestMail(mail: Claimed): Promise<Rendered | null | 'stopped'> {
    const request = await this.options.db.prisma.request.findUnique({
      where: { id: mail.requestId! },
      include: {
        work: { select: { name: true, discardedAt: true, tenantId: true, tenant: { select: { name: true } } } },
        owner: userRecord,
      },
    });
    if (!request || request.status !== 'pending' || request.work.discardedAt) return null;
    const { stopLink, stopped } = await this.recipientOf(request.work.tenantId, request.recipientEmail);
    if (stopped) return 'stopped';
    const { token, tokenHash } = newAnswerToken();
    const madeAt = this.options.clock();
    const stored = await this.run<{ generation: number }>(
      `INSERT INTO answer_links (token_hash, request_id, generation, created_at, dev_mailbox)
       SELECT :tokenHash, r.id, r.link_generation, :madeAt::timestamptz, :devMailbox FROM requests r
       WHERE r.id = :requestId::uuid AND r.status = 'pending'
       RETURNING generation`,
      { tokenHash, requestId: request.id, madeAt: madeAt.toISOString(), devMailbox: this.options.transport.keepsLinks },
    );
    if (stored.length === 0) return null;
    const origin = {
      request: { tenantId: request.work.tenantId, workId: request.workId, id: request.id, ownerId: request.ownerId },
    };
    const rendered = renderRequestMail({
      kind: mail.kind === 'reminder' ? 'reminder' : 'request',
      recipient: {
        email: request.recipientEmail,
        firstName: request.recipientFirstName,
        lastName: request.recipientLastName,
      },
      sender: request.owner,
      tenantName: request.work.tenant.name,
      workName: request.work.name,
      title: request.title,
      message: request.message,
      dueAt: request.dueAt,
      link: `${this.options.publicUrl}/r/${token}`,
      linkExpiresAt: new Date(madeAt.getTime() + this.options.answerLinkTtlMs),
      stopLink,
    });
    return { ...rendered, origin };
  }

  /**
   * An invitation's email, rendered now; null once it was accepted, declined, withdrawn or expired, `stopped` when
   * the address stopped the tenant's emails since.
   */
  private async renderInvitationMail(invitationId: string): Promise<Rendered | null | 'stopped'> {
    const invitation = await this.options.db.prisma.invitation.findUnique({
      where: { id: invitationId },
      include: { inviter: userRecord, tenant: { select: { name: true } } },
    });
    if (!invitation || invitation.expiresAt <= this.options.clock()) return null;
    const { stopLink, stopped } = await this.recipientOf(invitation.tenantId, invitation.email);
    if (stopped) return 'stopped';
    const rendered = renderInvitationMail({
      to: invitation.email,
      invitee: { firstName: invitation.firstName },
      inviter: invitation.inviter,
      tenantName: invitation.tenant.name,
      role: invitation.role,
      expiresAt: invitation.expiresAt,
      link: `${this.options.publicUrl}/console/invitations`,
      stopLink,
    });
    return { ...rendered, origin: { request: null } };
  }

  private async record(mail: Claimed, outcome: SendOutcome): Promise<void> {
    if (outcome.ok) return this.finish(mail, 'sent');
    const delay = outcome.permanent ? null : retryDelayMs(mail.attempts, this.options.random);
    if (delay === null) await this.finish(mail, 'failed', outcome.error);
    else {
      const at = this.options.clock();
      await this.run(
        `UPDATE mail_outbox SET next_attempt_at = :nextAttemptAt::timestamptz, last_error = :error WHERE id = :mailId::uuid AND status = 'queued'`,
        { mailId: mail.id, nextAttemptAt: new Date(at.getTime() + delay).toISOString(), error: outcome.error },
      );
      this.options.onAttempt?.('retry');
    }
    this.options.logger.info(
      { mailId: mail.id, kind: mail.kind, attempt: mail.attempts, permanent: outcome.permanent, error: outcome.error },
      'mail: attempt failed',
    );
  }

  /**
   * The email's final state, and its request's `emailDelivery` in the same statement, unless a resend has
   * replaced this email meanwhile (it is no longer `queued`): then the request describes the new one.
   */
  private async finish(
    mail: Claimed,
    status: 'sent' | 'failed' | 'dropped',
    error?: string,
    { emailsStopped = false }: { emailsStopped?: boolean } = {},
  ): Promise<void> {
    const at = this.options.clock().toISOString();
    await this.run(
      `WITH finished AS (
         UPDATE mail_outbox SET status = :status::mail_status, next_attempt_at = NULL, last_error = :error,
                sent_at = CASE WHEN :status = 'sent' THEN :at::timestamptz END
         WHERE id = :mailId::uuid AND status = 'queued'
         RETURNING request_id)
       UPDATE requests r
       SET email_status = :status::mail_status,
           email_sent_at = CASE WHEN :status = 'sent' THEN :at::timestamptz ELSE r.email_sent_at END,
           email_failure = :error,
           emails_stopped = r.emails_stopped OR :emailsStopped
       FROM finished WHERE r.id = finished.request_id`,
      { mailId: mail.id, status, at, error: error ?? null, emailsStopped },
    );
    this.options.onAttempt?.(status);
  }
}

/** An email as the transport takes it, with whose it is. */
type Rendered = RenderedMail & { origin: MailOrigin };

function plainContent(mail: Claimed): Rendered | null {
  if (mail.to === null || mail.subject === null || mail.text === null || mail.html === null) return null;
  return { to: mail.to, subject: mail.subject, text: mail.text, html: mail.html, origin: { request: null } };
}
