import type { Config } from '../config';
import type { Db } from '@works-api/prisma';
import type { Logger } from '../observability/logger';
import { MailSender } from './sender';
import { DevMailbox, smtpTransport } from './transport';

export interface ProcessMail {
  /** The sender when this process runs one (MAIL_SENDER), not started: jobs/index.ts starts it. */
  sender?: MailSender;
  /** With the dev mailbox on: where emails are kept (GET /dev/mailbox). */
  devMailbox?: DevMailbox;
}

/**
 * The transport the configuration asks for (SMTP, or the dev mailbox), and the sender when this process runs one
 * (MAIL_SENDER). With neither SMTP nor the dev mailbox, no sender runs: emails wait in the outbox, never lost, until
 * a process with SMTP_URL sends them (the start-up line says so).
 */
export function processMail(config: Pick<Config, 'mail' | 'limits' | 'sessions'>, db: Db, logger: Logger): ProcessMail {
  const devMailbox = config.mail.devMailbox ? new DevMailbox(logger) : undefined;
  const transport = config.mail.smtpUrl ? smtpTransport(config.mail.smtpUrl) : devMailbox;
  const sender =
    config.mail.sender && transport
      ? new MailSender({
          db,
          logger,
          transport,
          from: config.mail.from,
          publicUrl: config.mail.publicUrl,
          reminderBeforeMs: config.mail.reminderBeforeMs,
          answerLinkTtlMs: config.limits.answerLinkTtlMs,
          pollIntervalMs: config.mail.pollIntervalMs,
          signUp: config.sessions.signUp,
        })
      : undefined;
  return { ...(sender && { sender }), ...(devMailbox && { devMailbox }) };
}
