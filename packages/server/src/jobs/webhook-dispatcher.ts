import { Dispatcher } from '../webhooks/dispatcher';
import type { Job, JobContext } from './job';
import { outboxWorkerJob } from './outbox-worker-job';

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
  return outboxWorkerJob(
    'webhook-dispatcher',
    'webhook deliveries still in flight were cut off; they are sent again after their lease',
    dispatcher,
  );
}
