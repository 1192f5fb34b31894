import type { MailSender } from '../mail/sender';
import type { Job } from './job';

/** The mail sender (mail/sender.ts): sends what the mail outbox holds, through SMTP or the dev mailbox. */
export function mailSenderJob(sender: MailSender): Job {
  let running = false;
  return {
    name: 'mail-sender',
    cutOffMessage: 'emails still being sent were cut off; they are sent again after their lease',
    start() {
      sender.start();
      running = true;
    },
    async stop(timeoutMs) {
      running = false;
      return sender.stop(timeoutMs);
    },
    health: () => ({ running, failingSince: sender.loopState.failingSince }),
    metrics: () => ({ inFlight: sender.loopState.inFlight }),
  };
}
