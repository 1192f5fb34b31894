import type { Config } from '../config';
import type { Db } from '../db/client';
import type { Logger } from '../observability/logger';
import { MailSender } from './sender';
import { DevMailbox, smtpTransport } from './transport';

export interface RunningMail {
  sender?: MailSender;
  /** Without SMTP_URL: where emails are kept (GET /dev/mailbox). */
  devMailbox?: DevMailbox;
  stop(timeoutMs: number): Promise<boolean>;
}

/** The transport the configuration asks for, and the sender when this process runs one (MAIL_SENDER). */
export function startMail(config: Pick<Config, 'mail'>, db: Db, logger: Logger): RunningMail {
  const devMailbox = config.mail.smtpUrl ? undefined : new DevMailbox(logger);
  const transport = config.mail.smtpUrl ? smtpTransport(config.mail.smtpUrl) : devMailbox!;
  const sender = config.mail.sender
    ? new MailSender({
        db,
        logger,
        transport,
        from: config.mail.from,
        publicUrl: config.mail.publicUrl,
        reminderBeforeMs: config.mail.reminderBeforeMs,
        pollIntervalMs: config.mail.pollIntervalMs,
      }).start()
    : undefined;
  return {
    ...(sender && { sender }),
    ...(devMailbox && { devMailbox }),
    stop: async (timeoutMs) => (sender ? sender.stop(timeoutMs) : true),
  };
}
