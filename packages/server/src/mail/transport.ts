import type nodemailer from 'nodemailer';
import type { Logger } from '../observability/logger';
import type { RenderedMail } from './render';

export type OutgoingMail = RenderedMail & { from: string };

/** How one attempt went: `permanent` failures (the server refused the message for good) are not retried. */
export type SendOutcome = { ok: true } | { ok: false; permanent: boolean; error: string };

/**
 * Whose email it is: the request it belongs to and who sent that request (null for other mail). Not sent; the dev
 * mailbox keeps it, to show each email only to whom it may.
 */
export interface MailOrigin {
  request: { tenantId: string; workId: string; id: string; ownerId: string } | null;
  /** A sign-in email's link: the dev mailbox prints it in the log, so a newcomer signs in without any mail set up. */
  signInLink?: string;
}

export interface MailTransport {
  readonly description: string;
  /**
   * True when the emails do not leave the server but are shown to members (the dev mailbox): an answer given
   * through one of their links is then not the recipient's word, and is recorded so.
   */
  readonly keepsLinks: boolean;
  send(mail: OutgoingMail, origin?: MailOrigin): Promise<SendOutcome>;
  close(): void;
}

const MAX_ERROR_LENGTH = 1000;

/**
 * SMTP through nodemailer, from `SMTP_URL` (`smtp://user:pass@host:587`, `smtps://...` for implicit TLS). A 5xx
 * reply is permanent (the address does not exist, the message is refused); anything else (a 4xx, a refused or
 * timed-out connection) is retried.
 */
export function smtpTransport(url: string, timeoutMs = 30_000): MailTransport {
  // Loaded only with SMTP_URL set: a process without it (the dev mailbox, or emails waiting) never holds it.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const mailer = require('nodemailer') as typeof nodemailer;
  const transporter = mailer.createTransport(url, {}); // options in the URL
  transporter.set('connectionTimeout', timeoutMs);
  const parsed = new URL(url);
  return {
    description: `SMTP at ${parsed.hostname}:${parsed.port || (parsed.protocol === 'smtps:' ? 465 : 587)}`,
    keepsLinks: false,
    async send(mail) {
      try {
        await transporter.sendMail({ ...mail });
        return { ok: true };
      } catch (error) {
        const { responseCode, message } = error as { responseCode?: number; message?: string };
        return {
          ok: false,
          permanent: typeof responseCode === 'number' && responseCode >= 500 && responseCode < 600,
          error: String(message ?? error).slice(0, MAX_ERROR_LENGTH),
        };
      }
    },
    close: () => transporter.close(),
  };
}

export interface DevMail extends OutgoingMail, MailOrigin {
  id: string;
  at: string;
}

/**
 * The dev mailbox (local development, see `Config.mail.devMailbox`): nothing leaves the machine. Each email is kept
 * in memory, newest first, for GET /dev/mailbox and the console's Mailbox, which show each caller only what they
 * may see (http/dev-mailbox.ts). It holds live answer links, so only that it kept one is logged: never its text,
 * subject or links, at any level; except a sign-in email's link, logged at `info` (start-up's level) so that the
 * person at this machine can sign in to the console with nothing set up (only the dev mailbox does this: it is on
 * by default only on a loopback address with the embedded database).
 */
export class DevMailbox implements MailTransport {
  readonly description = 'dev mailbox (emails are kept in memory, never sent)';
  readonly keepsLinks = true;
  private readonly kept: DevMail[] = [];
  private count = 0;

  constructor(
    private readonly logger: Logger,
    private readonly keep = 100,
  ) {}

  send(mail: OutgoingMail, origin?: MailOrigin): Promise<SendOutcome> {
    const kept: DevMail = {
      ...mail,
      request: origin?.request ?? null,
      ...(origin?.signInLink !== undefined && { signInLink: origin.signInLink }),
      id: String(++this.count),
      at: new Date().toISOString(),
    };
    this.kept.unshift(kept);
    this.kept.length = Math.min(this.kept.length, this.keep);
    if (origin?.signInLink)
      this.logger.info(
        { devMail: { id: kept.id, to: mail.to }, signInLink: origin.signInLink },
        `dev mailbox: sign-in email for ${mail.to} kept, not sent; to sign in, open ${origin.signInLink}`,
      );
    else this.logger.info({ devMail: { id: kept.id } }, 'dev mailbox: an email was kept, not sent (see the Mailbox)');
    return Promise.resolve({ ok: true });
  }

  messages(): readonly DevMail[] {
    return this.kept;
  }

  close(): void {}
}
