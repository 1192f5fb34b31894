import { Client } from 'pg';
import type { Receiver } from '../support/receiver';
import type { SmtpSink } from '../support/smtp-sink';
import type { Acknowledged } from './writers';

/**
 * What `pnpm ha:check` verifies once the load has stopped: every acknowledged write read back through the server,
 * rows created twice counted in the database, and the outboxes' emails and webhook events of every acknowledged write
 * delivered.
 */

/** How long the outboxes may take to drain after the load: past a 60 s lease, with room. */
const OUTBOX_WAIT_MS = 120_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** An acknowledged write not read back as acknowledged, with the status the server answered. */
export interface Missing {
  ack: Acknowledged;
  status: number;
}

/** Reads every acknowledged write back through the server; returns those missing or not as acknowledged. */
export async function lost(baseUrl: string, apiKey: string, acknowledged: Acknowledged[]): Promise<Missing[]> {
  const missing: Missing[] = [];
  const queue = [...acknowledged];
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let ack = queue.pop(); ack; ack = queue.pop()) {
        const res = await fetch(baseUrl + ack.url, { headers: { Authorization: `Bearer ${apiKey}` } });
        const body = res.status === 200 ? ((await res.json()) as { request?: { status: string } }) : undefined;
        if (!body || (ack.kind === 'confirm' && body.request?.status !== 'confirmed'))
          missing.push({ ack, status: res.status });
      }
    }),
  );
  return missing;
}

/** Rows created more than once (works by name, requests by recipient), read from the database itself. */
export async function duplicated(databaseUrl: string, tenantId: string): Promise<string[]> {
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ key: string; n: number }>(
      `SELECT name AS key, count(*)::int AS n FROM works WHERE tenant_id = $1 GROUP BY name HAVING count(*) > 1
       UNION ALL
       SELECT r.recipient_email, count(*)::int FROM requests r JOIN works w ON w.id = r.work_id
       WHERE w.tenant_id = $1 GROUP BY r.recipient_email HAVING count(*) > 1`,
      [tenantId],
    );
    return rows.flatMap(({ key, n }) => Array.from({ length: n - 1 }, () => key));
  } finally {
    await client.end();
  }
}

/**
 * The outboxes resume by themselves: waits (bounded) until this tenant's mail and webhook queues are empty, then
 * checks that every acknowledged request's email reached the mail server (or was dropped because the request was
 * confirmed before its turn, as designed) and every acknowledged creation and confirmation reached the receiver.
 */
export async function outboxesDrained(
  databaseUrl: string,
  tenantId: string,
  acknowledged: Acknowledged[],
  receiver: Receiver,
  smtp: SmtpSink,
) {
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const started = performance.now();
    const mail = async () =>
      (
        await client.query<{ email: string; status: string }>(
          `SELECT r.recipient_email AS email, m.status::text AS status
           FROM mail_outbox m JOIN requests r ON r.id = m.request_id JOIN works w ON w.id = r.work_id
           WHERE w.tenant_id = $1 AND m.kind = 'request'`,
          [tenantId],
        )
      ).rows;
    const pendingWebhooks = async () =>
      (
        await client.query<{ n: number }>(
          `SELECT (SELECT count(*) FROM webhook_events WHERE tenant_id = $1 AND fanned_out_at IS NULL)
                + (SELECT count(*) FROM webhook_deliveries WHERE tenant_id = $1 AND status = 'pending') AS n`,
          [tenantId],
        )
      ).rows[0]!.n;
    // A send cut off by a kill before its outcome was written goes out again once its 60 s lease has run out.
    while (performance.now() - started < OUTBOX_WAIT_MS) {
      if ((await mail()).every((row) => row.status !== 'queued') && Number(await pendingWebhooks()) === 0) break;
      await sleep(500);
    }
    const drainedMs = performance.now() - started;
    // Per recipient (one per request, unless a request was created twice): the rows sent, dropped, and received.
    const tally = (list: string[]) =>
      list.reduce((map, key) => map.set(key, (map.get(key) ?? 0) + 1), new Map<string, number>());
    const rows = await mail();
    const sentRows = tally(rows.filter((row) => row.status === 'sent').map((row) => row.email));
    const dropped = new Set(rows.filter((row) => row.status === 'dropped').map((row) => row.email));
    const received = tally(smtp.received.flatMap((m) => m.to));
    const events = receiver.received.map(
      (r) => JSON.parse(r.body) as { id: string; type: string; data: { request?: { id: string } } },
    );
    const ids = (type: string) => new Set(events.filter((e) => e.type === type).map((e) => e.data.request?.id));
    const created = ids('request.created');
    const confirmed = ids('request.confirmed');
    const requests = acknowledged.filter((a) => a.kind === 'request');
    return {
      drainedMs,
      events: events.length,
      eventsTwice: events.length - new Set(events.map((e) => e.id)).size,
      undelivered:
        requests.filter((r) => !created.has(r.id)).length +
        acknowledged.filter((a) => a.kind === 'confirm' && !confirmed.has(a.id)).length,
      sent: smtp.received.length,
      dropped: requests.filter((r) => dropped.has(r.key)).length,
      unmailed: requests.filter((r) => !dropped.has(r.key) && !received.has(r.key)).length,
      mailTwice: [...received].reduce((extra, [to, n]) => extra + Math.max(0, n - (sentRows.get(to) ?? 0)), 0),
    };
  } finally {
    await client.end();
  }
}
