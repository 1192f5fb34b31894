import type { MailSender } from '../mail/sender';
import type { Job } from './job';
import { outboxWorkerJob } from './outbox-worker-job';

/** The mail sender (mail/sender.ts): sends what the mail outbox holds, through SMTP or the dev mailbox. */
export const mailSenderJob = (sender: MailSender): Job =>
  outboxWorkerJob('mail-sender', 'emails still being sent were cut off; they are sent again after their lease', sender);
