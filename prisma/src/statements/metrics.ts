import type { Db } from '../handle';
import { sendStatement } from './send';

/** The outbox queues as the metrics show them, each count stopped at the cap it was read with. */
export interface QueueCounts {
  /** Webhook events committed but not yet fanned out. */
  outbox: number;
  /** When the oldest of those was committed. */
  oldest: Date | string | null;
  /** Webhook deliveries whose next attempt is due. */
  due: number;
  /** Emails queued, retries included. */
  mail: number;
}

/**
 * Each count walks a partial index (webhook_events_unfanned_idx, webhook_deliveries_due_idx) that holds only the
 * queued rows (mail_outbox_due_idx for emails), and stops at `cap`; the oldest unfanned event is the first entry of
 * that index. So the statement costs O(min(queue, cap)) whatever the size of the history.
 */
const COUNT_QUEUES = `SELECT
       (SELECT count(*) FROM (SELECT 1 FROM webhook_events WHERE fanned_out_at IS NULL LIMIT :cap) o)::int AS outbox,
       (SELECT created_at FROM webhook_events WHERE fanned_out_at IS NULL ORDER BY id LIMIT 1) AS oldest,
       (SELECT count(*) FROM (SELECT 1 FROM webhook_deliveries
                              WHERE status = 'pending' AND next_attempt_at <= now() LIMIT :cap) d)::int AS due,
       (SELECT count(*) FROM (SELECT 1 FROM mail_outbox WHERE status = 'queued' LIMIT :cap) m)::int AS mail`;

export async function countQueues(db: Db, cap: number): Promise<QueueCounts | undefined> {
  const [row] = await sendStatement<QueueCounts>(db, COUNT_QUEUES, { cap });
  return row;
}
