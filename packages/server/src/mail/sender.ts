import type { Db } from '@works-api/prisma';
import { OutboxLoop } from '../outbox-loop';
import { newId } from '@works-api/prisma';
import { namedQuery, type StatementParams } from '@works-api/prisma';
import type { Invitation, MailMessage, MailRecipient, Request, Tenant, User, Work } from '@works-api/prisma/client';
import { secretBoxOf } from '@works-api/prisma';
import { DEFAULT_LIMITS } from '../domain/limits';
import { EMAILS_STOPPED, utcDay } from '../domain/mail-caps';
import { stopLinkToken } from '../domain/recipients/stop-links';
import { type NewAnswerToken, newAnswerToken } from '../domain/recipients/tokens';
import { retryDelayMs } from '../domain/webhooks/backoff';
import type { Logger } from '../observability/logger';
import { MAIL_COLUMNS } from '../domain/mail-outbox';
import { type RenderedMail, renderInvitationMail, renderRequestMail, renderSignInMail } from './render';
import { armSignIn, type SignUpPolicy } from '@works-api/prisma';
import { newSignInSecret, SIGN_IN_TTL_MS, signInLink } from '../domain/sessions/secrets';
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
  /** With `onlyTenants`: also the sign-in emails to these addresses (tests that share a database). */
  onlyAddresses?: () => readonly string[];
  /** `SIGNUP`: who a sign-in email goes to besides addresses with an account (invited ones, anyone, no one). */
  signUp?: SignUpPolicy;
}

/** `T` with every field possibly null: the columns of a LEFT JOIN. */
type Nullable<T> = { [K in keyof T]: T[K] | null };

/**
 * A claimed email as the claim returns it: the outbox row, and what rendering it needs, read in the same statement.
 * For a request's email (`request`, `reminder`): the request, its work's name and whether the work is discarded.
 * For an invitation's: the invitation. For both: the tenant's name, who is writing (the request's owner, the
 * inviter), the address's mail_recipients row (what the stop link names; null where there is none yet), and
 * whether the claim stored the answer link it made for this email (`linked`). Null where the subject is gone.
 */
type ClaimedRow = Pick<
  MailMessage,
  | 'id'
  | 'kind'
  | 'tenantId'
  | 'requestId'
  | 'invitationId'
  | 'signInId'
  | 'to'
  | 'subject'
  | 'text'
  | 'html'
  | 'attempts'
> &
  Nullable<
    Pick<
      Request,
      | 'status'
      | 'workId'
      | 'ownerId'
      | 'title'
      | 'message'
      | 'dueAt'
      | 'recipientEmail'
      | 'recipientFirstName'
      | 'recipientLastName'
    >
  > & {
    workName: Work['name'] | null;
    workDiscarded: boolean;
    invitationEmail: Invitation['email'] | null;
    invitationFirstName: Invitation['firstName'] | null;
    role: Invitation['role'] | null;
    expiresAt: Invitation['expiresAt'] | null;
    /** The tenant the email is about (the request's work's, the invitation's): its stop link names it. */
    aboutTenantId: Tenant['id'] | null;
    tenantName: Tenant['name'] | null;
    senderEmail: User['email'] | null;
    senderFirstName: User['firstName'] | null;
    senderLastName: User['lastName'] | null;
    recipientId: MailRecipient['id'] | null;
    stopped: boolean;
    linked: boolean;
    /** Its place in the claim (1-based): which of the claim's answer tokens is its own. */
    n: number;
  };

type Claimed = ClaimedRow & {
  /** Real time (Date.now()) until which the claim holds: its lease, read on this process's clock. */
  leaseEndsAt: number;
  /** The answer link the claim made for it (stored only where `linked`), and when. */
  answer: NewAnswerToken;
  linkMadeAt: Date;
};

/** An attempt's outcome, as one statement records those of several emails. */
interface Outcome {
  mail: Claimed;
  /** `retry`: the email stays queued, due again at `retryAt`. */
  status: 'sent' | 'failed' | 'dropped' | 'retry';
  error: string | null;
  retryAt: Date | null;
  emailsStopped: boolean;
  at: Date;
}

/** A claimed email is this process's for this long: one killed mid-send leaves it due again afterwards. */
export const LEASE_MS = 60_000;
/** How often an attempt's outcome is written again while the database is away (within the lease). */
const RECORD_RETRY_MS = 1_000;
const REMINDER_BATCH = 100;
/**
 * A nudge (a create that queued an email, a finished send) waits this long before the next round, also when it
 * came during a round: under a steady stream of creates, each round claims the emails of that many milliseconds
 * (up to `maxInFlight`) in one statement, rather than one or two emails a round. Emails leave that much later.
 */
const NUDGE_BATCH_WINDOW_MS = 10;

/**
 * Sends the mail outbox, outside the request path. Each round: queue the reminders that have come due, then claim
 * due emails (`FOR UPDATE SKIP LOCKED`, with a lease) and send them. Every server process runs one (as may
 * `pnpm worker`); they share the work through the database. An email is marked sent right after the mail server
 * accepts it, so a restart never sends it again; only a process killed between the server's acceptance and that
 * update (milliseconds) leaves one to be sent twice, after its lease. Failed attempts are retried with the
 * webhooks' backoff (about 3 days); a permanent failure, or the last attempt, is recorded on the request.
 *
 * Statements per email, as a rule: the claim returns what rendering needs and stores the answer links (one
 * statement per round), and the outcomes that are ready at one moment (a round's emails, through a transport that
 * answers at once) are recorded in one statement. Only an email whose address has no mail_recipients row yet (one
 * queued before there were such rows) takes statements of its own.
 */
export class MailSender {
  private readonly options: Required<Omit<MailSenderOptions, 'onAttempt' | 'onlyTenants' | 'onlyAddresses'>> &
    Pick<MailSenderOptions, 'onAttempt' | 'onlyTenants' | 'onlyAddresses'>;
  private readonly loop: OutboxLoop;
  private unsubscribe: (() => void) | undefined;
  /** The outcomes waiting for the next record statement (sent within this turn of the event loop). */
  private pendingOutcomes: Array<{ outcome: Outcome; resolve: () => void; reject: (error: unknown) => void }> = [];
  /** Real time (Date.now()) of the last look for due reminders, and whether it filled a batch. */
  private remindersLookedAt = -Infinity;
  private remindersFull = false;

  constructor(options: MailSenderOptions) {
    this.options = {
      answerLinkTtlMs: DEFAULT_LIMITS.answerLinkTtlMs,
      pollIntervalMs: 1000,
      maxInFlight: 8,
      clock: () => new Date(),
      random: Math.random,
      signUp: 'invite',
      ...options,
    };
    this.loop = new OutboxLoop({
      pollIntervalMs: this.options.pollIntervalMs,
      maxInFlight: this.options.maxInFlight,
      nudgeDelayMs: NUDGE_BATCH_WINDOW_MS,
      delayNudgesDuringRounds: true,
      lookAgainOnlyWhenFull: true,
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

  /**
   * Reminders due (looked for once per poll interval: they come due hours ahead, and a look is a statement), then
   * as many queued emails as there is room for. Busy when it filled the room.
   */
  private async round(): Promise<boolean> {
    if (this.remindersFull || Date.now() - this.remindersLookedAt >= this.options.pollIntervalMs)
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
    this.remindersLookedAt = Date.now();
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
    this.remindersFull = rows.length === REMINDER_BATCH;
    if (rows.length > 0) this.options.logger.info({ reminders: rows.length }, 'mail: reminders queued');
    return rows.length;
  }

  /**
   * Claims up to `limit` due emails with a lease, and in the same statement reads what rendering each needs and
   * stores the answer link of each request's email that will be sent (the request pending, its work not
   * discarded, its address's row there and not stopped), with the request's current link generation: the link
   * works before the email leaves. Each email gets a new token made here; only its hash reaches the database.
   */
  private async claim(limit: number): Promise<Claimed[]> {
    if (this.loop.stopped || limit <= 0) return [];
    const now = this.options.clock();
    const leaseEndsAt = Date.now() + LEASE_MS;
    const answers = Array.from({ length: limit }, () => newAnswerToken());
    const claimed = await this.run<ClaimedRow>(
      `WITH due AS (
         SELECT id FROM mail_outbox WHERE status = 'queued' AND next_attempt_at <= :now::timestamptz
           AND (:onlyTenants::uuid[] IS NULL OR tenant_id = ANY (:onlyTenants::uuid[])
                OR (sign_in_id IS NOT NULL AND "to" = ANY (:onlyAddresses::text[])))
         ORDER BY next_attempt_at LIMIT :limit FOR UPDATE SKIP LOCKED),
       claimed AS (
         UPDATE mail_outbox m SET attempts = m.attempts + 1, next_attempt_at = :leaseEnds::timestamptz
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
         SELECT (:tokenHashes::text[])[a.n], a.request_id, a.link_generation, :madeAt::timestamptz, :devMailbox
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
              a.stopped, EXISTS (SELECT 1 FROM linked l WHERE l.token_hash = (:tokenHashes::text[])[a.n]) AS linked
       FROM about a
       LEFT JOIN tenants t ON t.id = a.about_tenant_id
       LEFT JOIN users u ON u.id = a.sender_id`,
      {
        now: now.toISOString(),
        leaseEnds: new Date(now.getTime() + LEASE_MS).toISOString(),
        limit,
        onlyTenants: this.options.onlyTenants?.() ?? null,
        onlyAddresses: this.options.onlyAddresses?.() ?? [],
        tokenHashes: answers.map((answer) => answer.tokenHash),
        madeAt: now.toISOString(),
        devMailbox: this.options.transport.keepsLinks,
      },
    );
    return claimed.map((mail) => ({ ...mail, leaseEndsAt, answer: answers[mail.n - 1]!, linkMadeAt: now }));
  }

  private async send(mail: Claimed): Promise<void> {
    try {
      const rendered = mail.requestId
        ? await this.renderRequestMail(mail)
        : mail.invitationId
          ? await this.renderInvitationMail(mail)
          : mail.signInId
            ? await this.renderSignInMail(mail.signInId)
            : plainContent(mail);
      if (rendered === 'stopped') return await this.finish(mail, 'dropped', EMAILS_STOPPED, true);
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
   * such rows; `stopped` when the address stopped the tenant's emails, or every email of the service. The claim
   * read it already, as a rule: this runs only where it found none.
   */
  private async recipientOf(tenantId: string, email: string): Promise<{ recipientId: string; stopped: boolean }> {
    const [row] = await this.run<{ id: string; stopped: boolean }>(
      `WITH made AS (
         INSERT INTO mail_recipients (tenant_id, email, id, day, sent)
         VALUES (:tenantId::uuid, canonical_email(:email), :recipientId::uuid, :day::date, 0)
         ON CONFLICT (tenant_id, email) DO NOTHING RETURNING id, stopped_at),
       everywhere AS (
         SELECT EXISTS (SELECT 1 FROM mail_addresses WHERE email = canonical_email(:email) AND stopped_at IS NOT NULL) AS stopped)
       SELECT id, stopped_at IS NOT NULL OR (SELECT stopped FROM everywhere) AS stopped FROM made
       UNION ALL
       SELECT id, stopped_at IS NOT NULL OR (SELECT stopped FROM everywhere) FROM mail_recipients
       WHERE tenant_id = :tenantId::uuid AND email = canonical_email(:email)
       LIMIT 1`,
      { tenantId, email, recipientId: newId(), day: utcDay(this.options.clock()) },
    );
    if (!row) throw new Error('the recipient row was written by a concurrent sender: try again after the lease');
    return { recipientId: row.id, stopped: row.stopped };
  }

  private stopLink(recipientId: string): string {
    return `${this.options.publicUrl}/stop/${stopLinkToken(secretBoxOf(this.options.db), recipientId)}`;
  }

  /**
   * The address's stop link, or `stopped`: from the row the claim read, or (none there) from `recipientOf`, which
   * makes it. `fresh` says which: only then was no answer link stored by the claim.
   */
  private async recipientLinkOf(
    mail: Claimed,
    tenantId: string,
    email: string,
  ): Promise<{ stopLink: string; fresh: boolean } | 'stopped'> {
    if (mail.recipientId !== null)
      return mail.stopped ? 'stopped' : { stopLink: this.stopLink(mail.recipientId), fresh: false };
    const { recipientId, stopped } = await this.recipientOf(tenantId, email);
    return stopped ? 'stopped' : { stopLink: this.stopLink(recipientId), fresh: true };
  }

  /**
   * Renders a request's email with its answer link, whose hash is stored first (with the request's current link
   * generation, in the claim, or here where the claim found no recipient row). Null when the request no longer
   * takes an answer: nothing to send; `stopped` when its recipient stopped the tenant's emails (then no link is
   * made).
   */
  private async renderRequestMail(mail: Claimed): Promise<Rendered | null | 'stopped'> {
    const { aboutTenantId: tenantId, recipientEmail: email, workId, ownerId, title, workName, tenantName } = mail;
    if (mail.status !== 'pending' || mail.workDiscarded) return null;
    if (tenantId === null || email === null || workId === null || ownerId === null) return null;
    const recipient = await this.recipientLinkOf(mail, tenantId, email);
    if (recipient === 'stopped') return 'stopped';
    if (recipient.fresh ? !(await this.storeAnswerLink(mail)) : !mail.linked) return null;
    const sender = senderOf(mail);
    if (!sender || tenantName === null || workName === null || title === null) return null;
    const origin = { request: { tenantId, workId, id: mail.requestId!, ownerId } };
    const rendered = renderRequestMail({
      kind: mail.kind === 'reminder' ? 'reminder' : 'request',
      recipient: { email, firstName: mail.recipientFirstName ?? '', lastName: mail.recipientLastName ?? '' },
      sender,
      tenantName,
      workName,
      title,
      message: mail.message ?? '',
      dueAt: mail.dueAt,
      link: `${this.options.publicUrl}/r/${mail.answer.token}`,
      linkExpiresAt: new Date(mail.linkMadeAt.getTime() + this.options.answerLinkTtlMs),
      stopLink: recipient.stopLink,
    });
    return { ...rendered, origin };
  }

  /**
   * Stores the email's answer link where the claim did not (it found no recipient row): with the request's
   * current link generation, if it is still pending. False when it is not.
   */
  private async storeAnswerLink(mail: Claimed): Promise<boolean> {
    const stored = await this.run<{ generation: number }>(
      `INSERT INTO answer_links (token_hash, request_id, generation, created_at, dev_mailbox)
       SELECT :tokenHash, r.id, r.link_generation, :madeAt::timestamptz, :devMailbox FROM requests r
       WHERE r.id = :requestId::uuid AND r.status = 'pending'
       RETURNING generation`,
      {
        tokenHash: mail.answer.tokenHash,
        requestId: mail.requestId,
        madeAt: mail.linkMadeAt.toISOString(),
        devMailbox: this.options.transport.keepsLinks,
      },
    );
    return stored.length > 0;
  }

  /**
   * An invitation's email, rendered now; null once it was accepted, declined, withdrawn or expired, `stopped` when
   * the address stopped the tenant's emails since.
   */
  private async renderInvitationMail(mail: Claimed): Promise<Rendered | null | 'stopped'> {
    const { invitationEmail, expiresAt, aboutTenantId, tenantName, role } = mail;
    if (invitationEmail === null || expiresAt === null || aboutTenantId === null || tenantName === null || !role)
      return null;
    if (expiresAt <= this.options.clock()) return null;
    const inviter = senderOf(mail);
    if (!inviter) return null;
    const recipient = await this.recipientLinkOf(mail, aboutTenantId, invitationEmail);
    if (recipient === 'stopped') return 'stopped';
    const rendered = renderInvitationMail({
      to: invitationEmail,
      invitee: { firstName: mail.invitationFirstName ?? '' },
      inviter,
      tenantName,
      role,
      expiresAt,
      link: `${this.options.publicUrl}/console/invitations?email=${encodeURIComponent(invitationEmail)}`,
      stopLink: recipient.stopLink,
    });
    return { ...rendered, origin: { request: null } };
  }

  /**
   * A sign-in email: its link's token and code are made now and only their hashes stored (valid SIGN_IN_TTL from
   * this attempt), if the address may sign in (an account, or SIGNUP allows one); null when it may not or the
   * sign-in was used: then nothing is sent, and the person who asked learns nothing they did not know.
   */
  private async renderSignInMail(signInId: string): Promise<Rendered | null> {
    const now = this.options.clock();
    const secret = newSignInSecret();
    const expiresAt = new Date(now.getTime() + SIGN_IN_TTL_MS);
    const armed = await armSignIn(this.options.db, {
      id: signInId,
      tokenHash: secret.tokenHash,
      codeHash: secret.codeHash,
      expiresAt,
      now,
      signUp: this.options.signUp,
    });
    if (!armed) return null;
    const link = signInLink(this.options.publicUrl, secret.token);
    const rendered = renderSignInMail({
      to: armed.email,
      link,
      code: secret.code,
      expiresAt,
      newAccount: !armed.hasAccount,
    });
    return { ...rendered, origin: { request: null, signInLink: link } };
  }

  private async record(mail: Claimed, outcome: SendOutcome): Promise<void> {
    if (outcome.ok) return this.finish(mail, 'sent');
    const delay = outcome.permanent ? null : retryDelayMs(mail.attempts, this.options.random);
    if (delay === null) await this.finish(mail, 'failed', outcome.error);
    else {
      const at = this.options.clock();
      await this.recordOutcome({
        mail,
        status: 'retry',
        error: outcome.error,
        retryAt: new Date(at.getTime() + delay),
        emailsStopped: false,
        at,
      });
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
    error: string | null = null,
    emailsStopped = false,
  ): Promise<void> {
    await this.recordOutcome({ mail, status, error, retryAt: null, emailsStopped, at: this.options.clock() });
    this.options.onAttempt?.(status);
  }

  /**
   * Records an outcome with the others that are ready in this turn of the event loop, in one statement (below):
   * no outcome waits for another, only for the end of the turn it is in, so none widens the window in which a
   * killed process leaves a sent email to be sent again. Rejects when that statement failed.
   */
  private recordOutcome(outcome: Outcome): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (this.pendingOutcomes.length === 0) setImmediate(() => void this.writeOutcomes());
      this.pendingOutcomes.push({ outcome, resolve, reject });
    });
  }

  /**
   * One statement for the outcomes of several emails: each email's state (a retry stays queued, due again later),
   * and the `emailDelivery` of each request whose email that was, unless a resend has replaced it meanwhile (it is
   * no longer `queued`): then the request describes the new one. Of two emails of one request recorded together
   * (its email and its reminder), the later one's outcome is the request's.
   */
  private async writeOutcomes(): Promise<void> {
    const batch = this.pendingOutcomes;
    this.pendingOutcomes = [];
    const outcomes = batch.map((entry) => entry.outcome);
    try {
      // Not prepared: a generic plan, made while few emails are queued, reads every queued one through the partial
      // index to find these few (seen with plan_cache_mode = force_generic_plan), and keeps doing so through a
      // backlog; planned for each call, it looks them up by key once the queue is long.
      await namedQuery(
        this.options.db,
        `WITH outcome AS (
           SELECT * FROM unnest(:mailIds::uuid[], :statuses::text[], :errors::text[], :retryAts::timestamptz[],
                                :emailsStopped::boolean[], :ats::timestamptz[])
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
         FROM latest l WHERE r.id = l.request_id`,
        {
          mailIds: outcomes.map((o) => o.mail.id),
          statuses: outcomes.map((o) => o.status),
          errors: outcomes.map((o) => o.error),
          retryAts: outcomes.map((o) => o.retryAt?.toISOString() ?? null),
          emailsStopped: outcomes.map((o) => o.emailsStopped),
          ats: outcomes.map((o) => o.at.toISOString()),
        },
      );
    } catch (error) {
      for (const entry of batch) entry.reject(error);
      return;
    }
    for (const entry of batch) entry.resolve();
  }
}

/** An email as the transport takes it, with whose it is. */
type Rendered = RenderedMail & { origin: MailOrigin };

/** Who is writing the email (the request's owner, the inviter), as the claim read them. */
function senderOf(mail: Claimed): { email: string; firstName: string; lastName: string } | null {
  if (mail.senderEmail === null || mail.senderFirstName === null || mail.senderLastName === null) return null;
  return { email: mail.senderEmail, firstName: mail.senderFirstName, lastName: mail.senderLastName };
}

function plainContent(mail: Claimed): Rendered | null {
  if (mail.to === null || mail.subject === null || mail.text === null || mail.html === null) return null;
  return { to: mail.to, subject: mail.subject, text: mail.text, html: mail.html, origin: { request: null } };
}
