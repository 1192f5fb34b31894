import type { Job } from './job';

/** What the mail sender and the webhook dispatcher share: a loop started once, stopped with a deadline. */
export interface OutboxWorker {
  start(): unknown;
  stop(timeoutMs: number): Promise<boolean>;
  readonly loopState: { failingSince: Date | undefined; inFlight: number };
}

/** An outbox worker as a job: its health and gauges are its loop's. */
export function outboxWorkerJob(name: string, cutOffMessage: string, worker: OutboxWorker): Job {
  let running = false;
  return {
    name,
    cutOffMessage,
    start() {
      worker.start();
      running = true;
    },
    async stop(timeoutMs) {
      running = false;
      return worker.stop(timeoutMs);
    },
    health: () => ({ running, failingSince: worker.loopState.failingSince }),
    metrics: () => ({ inFlight: worker.loopState.inFlight }),
  };
}
