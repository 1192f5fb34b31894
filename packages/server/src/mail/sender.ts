import { OutboxLoop } from '../jobs/outbox-loop';
import { newId } from '@works-api/prisma';
import {
  claimDueEmails,
  type ClaimedEmailRow,
  ensureMailRecipient,
  insertAnswerLink,
  queueDueReminders,
} from '@works-api/prisma';
import { secretBoxOf } from '@works-api/prisma';
import { DEFAULT_LIMITS } from '../domain/limits';
import { EMAILS_STOPPED, utcDay } from './caps';
import { stopLinkToken } from '../domain/recipients/stop-links';
import { type NewAnswerToken, newAnswerToken } from '../domain/recipients/tokens';
import { retryDelayMs } from '../webhooks/backoff';
import { type RenderedMail, renderInvitationMail, renderRequestMail } from './render';
import type { MailSenderOptions } from './sender-options';
import { renderSignInEmail } from './sign-in-email';
import type { MailOrigin, SendOutcome } from './transport';
import { OutcomeRecorder } from './outcomes';

export type { MailSenderOptions } from './sender-options';

type Claimed = ClaimedEmailRow & {
  /** Real time (Date.now()) until which the claim holds: its lease, read on this process's clock. */
  leaseEndsAt: number;
  /** The answer link the claim made for it (stored only where `linked`), and when. */
  answer: NewAnswerToken;
  linkMadeAt: Date;
};

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
 * Statements per email, as a rule: one claim per round reads what rendering needs, and one statement records
 * the outcomes ready together (outcomes.ts).
 */
export class MailSender {
  private readonly options: Required<Omit<MailSenderOptions, 'onAttempt' | 'onlyTenants' | 'onlyAddresses'>> &
    Pick<MailSenderOptions, 'onAttempt' | 'onlyTenants' | 'onlyAddresses'>;
  private readonly loop: OutboxLoop;
  private unsubscribe: (() => void) | undefined;
  private readonly outcomes: OutcomeRecorder;
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
    this.outcomes = new OutcomeRecorder(this.options.db);
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

  /** The loop's state, for the job that runs it (jobs/). */
  get loopState(): { failingSince: Date | undefined; inFlight: number } {
    return { failingSince: this.loop.failingSince, inFlight: this.loop.inFlightCount };
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
    const rows = await queueDueReminders(this.options.db, {
      now: now.toISOString(),
      before,
      batch: REMINDER_BATCH,
      mailIds: ids,
      onlyTenants: this.options.onlyTenants?.() ?? null,
    });
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
    const claimed = await claimDueEmails(this.options.db, {
      now: now.toISOString(),
      leaseEnds: new Date(now.getTime() + LEASE_MS).toISOString(),
      limit,
      onlyTenants: this.options.onlyTenants?.() ?? null,
      onlyAddresses: this.options.onlyAddresses?.() ?? [],
      tokenHashes: answers.map((answer) => answer.tokenHash),
      madeAt: now.toISOString(),
      devMailbox: this.options.transport.keepsLinks,
    });
    return claimed.map((mail) => ({ ...mail, leaseEndsAt, answer: answers[mail.n - 1]!, linkMadeAt: now }));
  }

  private async send(mail: Claimed): Promise<void> {
    try {
      const rendered = mail.requestId
        ? await this.renderRequestMail(mail)
        : mail.invitationId
          ? await this.renderInvitationMail(mail)
          : mail.signInId
            ? await renderSignInEmail(this.options.db, mail.signInId, this.options)
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
   * such rows; `stopped` when the address stopped the tenant's emails. The claim read it already, as a rule: this
   * runs only where it found none.
   */
  private async recipientOf(tenantId: string, email: string): Promise<{ recipientId: string; stopped: boolean }> {
    const [row] = await ensureMailRecipient(this.options.db, {
      tenantId,
      email,
      recipientId: newId(),
      day: utcDay(this.options.clock()),
    });
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
    const stored = await insertAnswerLink(this.options.db, {
      tokenHash: mail.answer.tokenHash,
      requestId: mail.requestId,
      madeAt: mail.linkMadeAt.toISOString(),
      devMailbox: this.options.transport.keepsLinks,
    });
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

  private async record(mail: Claimed, outcome: SendOutcome): Promise<void> {
    if (outcome.ok) return this.finish(mail, 'sent');
    const delay = outcome.permanent ? null : retryDelayMs(mail.attempts, this.options.random);
    if (delay === null) await this.finish(mail, 'failed', outcome.error);
    else {
      const at = this.options.clock();
      await this.outcomes.record({
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
    await this.outcomes.record({ mail, status, error, retryAt: null, emailsStopped, at: this.options.clock() });
    this.options.onAttempt?.(status);
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
