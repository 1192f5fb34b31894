import { Dispatcher } from '../webhooks/dispatcher';
import type { Job, JobContext } from './job';

/** The webhook dispatcher (webhooks/dispatcher.ts): fans events out to endpoints and delivers them. */
export function webhookDispatcherJob({ config, database, logger, telemetry }: JobContext): Job {
  const dispatcher = new Dispatcher({
    db: database,
    logger,
    allowPrivateUrls: config.webhooks.allowPrivateUrls,
    pollIntervalMs: config.webhooks.pollIntervalMs,
    maxInFlightPerTenant: config.webhooks.maxInFlightPerTenant,
    cleanupIntervalMs: config.webhooks.historyCleanupIntervalMs,
    ...(telemetry.metrics && { metrics: telemetry.metrics }),
    ...(telemetry.tracing && { tracing: telemetry.tracing }),
  });
  let running = false;
  return {
    name: 'webhook-dispatcher',
    cutOffMessage: 'webhook deliveries still in flight were cut off; they are sent again after their lease',
    start() {
      dispatcher.start();
      running = true;
    },
    async stop(timeoutMs) {
      running = false;
      return dispatcher.stop(timeoutMs);
    },
    health: () => ({ running, failingSince: dispatcher.loopState.failingSince }),
    metrics: () => ({ inFlight: dispatcher.loopState.inFlight }),
  };
}
