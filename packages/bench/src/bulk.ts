import os from 'node:os';
import type { Request } from 'autocannon';
import { Client } from 'pg';
import { callApi } from './fixtures';
import { runLoad } from './load';

/**
 * Bulk send (issue 41) on PostgreSQL, in one run of one server process:
 * 1. single creates (POST .../requests) at `connections`, as the baseline: requests/s and p99;
 * 2. batches of 100 and of 1,000 (POST .../request-batches), one at a time: requests/s (items answered per second)
 *    and the batch's p50/p99 latency;
 * 3. the mail sender draining a batch of 1,000's emails, against 1,000 single creates' emails sent by as many calls:
 *    seconds from the last answer to the last email sent;
 * 4. single creates in the SAME work while batches of 1,000 run back to back: their p99 against alone (the batch
 *    must not hold locks that stall them past its own statement).
 * Targets (issue 41): a batch of 1,000 under 1 s at p99 on an idle machine; at least 5× the requests/s of single
 * creates. The load average is printed with the figures: these machines are shared.
 */
export interface BulkResult {
  loadAverage: number[];
  single: { rps: number; p50Ms: number; p99Ms: number };
  batches: Array<{ size: number; batches: number; rps: number; p50Ms: number; p99Ms: number; maxMs: number }>;
  speedup1000: number;
  drain: { batchS: number; singlesS: number; emails: number };
  singlesBesideBatches: { aloneP99Ms: number; besideP99Ms: number; besideRps: number; batchesMeanwhile: number };
}

const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? 0;
};

let sequence = 0;
const freshEmail = (runId: string) => `bulk-${runId}-${(++sequence).toString(36)}@example.com`;

async function newWork(baseUrl: string, adminToken: string, runId: string, name: string) {
  const { apiKey } = await callApi<{ apiKey: { secret: string } }>(baseUrl, adminToken, 'POST', '/v1/admin/users', {
    email: `bulk-owner-${runId}-${name}@example.com`,
    firstName: 'Bulk',
    lastName: name,
  });
  const key = apiKey.secret;
  const { tenant } = await callApi<{ tenant: { id: string } }>(baseUrl, key, 'POST', '/v1/tenants', {
    name: `Bulk ${runId} ${name}`,
  });
  const { work } = await callApi<{ work: { id: string } }>(baseUrl, key, 'POST', `/v1/tenants/${tenant.id}/works`, {
    name: `Bulk work ${name}`,
  });
  const base = `/v1/tenants/${tenant.id}/works/${work.id}`;
  return { key, tenantId: tenant.id, requests: `${base}/requests`, batches: `${base}/request-batches` };
}

const singleCreates = (path: string, key: string, runId: string): Request[] => [
  {
    method: 'POST',
    setupRequest: (req) => ({
      ...req,
      path,
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ title: 'Confirm your balance', recipient: { email: freshEmail(runId) } }),
    }),
  },
];

async function sendBatch(baseUrl: string, path: string, key: string, size: number, runId: string) {
  const body = JSON.stringify({
    defaults: { title: 'Confirm your balance', message: 'Please confirm the balance shown in our records.' },
    items: Array.from({ length: size }, (_, i) => ({
      recipient: { email: freshEmail(runId), firstName: 'Recipient', lastName: `Number ${i}` },
    })),
  });
  const started = performance.now();
  const res = await fetch(baseUrl + path, {
    method: 'POST',
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
    body,
  });
  const json = (await res.json()) as { batch?: { requests: Array<{ id: string }> } };
  const ms = performance.now() - started;
  if (res.status !== 201) throw new Error(`a batch of ${size}: ${res.status} ${JSON.stringify(json).slice(0, 300)}`);
  return { ms, ids: json.batch!.requests.map((request) => request.id) };
}

/** Seconds until none of the tenant's emails (with null: none at all) is queued any more (bounded: 120 s). */
async function drained(pg: Client, tenantId: string | null, since: number): Promise<number> {
  for (;;) {
    const { rows } = await pg.query<{ n: string }>(
      "SELECT count(*) AS n FROM mail_outbox WHERE ($1::uuid IS NULL OR tenant_id = $1) AND status = 'queued'",
      [tenantId],
    );
    if (Number(rows[0]!.n) === 0) return (performance.now() - since) / 1000;
    if (performance.now() - since > 120_000) throw new Error('the mail sender did not drain in 120 s');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export async function bulkComparison(
  baseUrl: string,
  adminToken: string,
  runId: string,
  postgresUrl: string,
  options: { durationS: number; warmupS: number; connections: number },
  log: (line: string) => void,
): Promise<BulkResult> {
  const pg = new Client({ connectionString: postgresUrl });
  await pg.connect();
  try {
    const loadAverage = os.loadavg();
    const one = await newWork(baseUrl, adminToken, runId, 'singles');
    const load = (connections: number, durationS: number, work = one) =>
      runLoad({ url: baseUrl, requests: singleCreates(work.requests, work.key, runId), connections, durationS });
    if (options.warmupS > 0) await load(options.connections, options.warmupS);
    const single = await load(options.connections, options.durationS);
    if (single.errors > 0) throw new Error(`single creates: ${JSON.stringify(single.statusCodes)}`);
    log(`  single creates, ${options.connections} connections: ${single.rps.toFixed(0)} req/s, p99 ${single.p99Ms} ms`);

    const batches: BulkResult['batches'] = [];
    for (const size of [100, 1000]) {
      const work = await newWork(baseUrl, adminToken, runId, `batches-${size}`);
      await sendBatch(baseUrl, work.batches, work.key, size, runId); // warm-up
      const times: number[] = [];
      const started = performance.now();
      // As many as the run's duration allows, at least 10, at most 60.
      while (times.length < 60 && (times.length < 10 || performance.now() - started < options.durationS * 1000))
        times.push((await sendBatch(baseUrl, work.batches, work.key, size, runId)).ms);
      const elapsedS = (performance.now() - started) / 1000;
      const row = {
        size,
        batches: times.length,
        rps: (times.length * size) / elapsedS,
        p50Ms: quantile(times, 0.5),
        p99Ms: quantile(times, 0.99),
        maxMs: Math.max(...times),
      };
      batches.push(row);
      log(
        `  batches of ${String(size).padStart(4)}, one at a time: ${row.rps.toFixed(0)} requests/s ` +
          `(${(row.rps / single.rps).toFixed(1)}x single creates), p50 ${row.p50Ms.toFixed(0)} ms, ` +
          `p99 ${row.p99Ms.toFixed(0)} ms, max ${row.maxMs.toFixed(0)} ms over ${row.batches} batches`,
      );
    }

    // The mail sender: a batch of 1,000's emails against 1,000 single creates' (each work its own tenant).
    // First the backlog the batches above queued (the sender sends in queue order), then one batch alone.
    const backlog = await drained(pg, null, performance.now());
    log(`  (the mail sender drained the batches' backlog in ${backlog.toFixed(1)} s)`);
    const drainWork = await newWork(baseUrl, adminToken, runId, 'drain-batch');
    await sendBatch(baseUrl, drainWork.batches, drainWork.key, 1000, runId);
    const batchS = await drained(pg, drainWork.tenantId, performance.now());
    const singlesWork = await newWork(baseUrl, adminToken, runId, 'drain-singles');
    const singles = await runLoad({
      url: baseUrl,
      requests: singleCreates(singlesWork.requests, singlesWork.key, runId),
      connections: options.connections,
      durationS: 60,
      amount: 1000,
    });
    if (singles.errors > 0) throw new Error(`single creates: ${JSON.stringify(singles.statusCodes)}`);
    const singlesS = await drained(pg, singlesWork.tenantId, performance.now());
    log(
      `  mail sender: the 1,000 emails of a batch sent ${batchS.toFixed(1)} s after its answer ` +
        `(${(1000 / batchS).toFixed(0)} emails/s); ` +
        `1,000 single creates' ${singlesS.toFixed(1)} s after the last answer (${singles.durationS.toFixed(1)} s of creates)`,
    );

    // Single creates in one work, alone and while batches of 1,000 go into the same work.
    const shared = await newWork(baseUrl, adminToken, runId, 'shared');
    const besideConnections = Math.max(2, Math.floor(options.connections / 2));
    const alone = await load(besideConnections, options.durationS, shared);
    let stop = false;
    let batchesMeanwhile = 0;
    const batchLoop = (async () => {
      while (!stop) {
        await sendBatch(baseUrl, shared.batches, shared.key, 1000, runId);
        batchesMeanwhile++;
      }
    })();
    const beside = await load(besideConnections, options.durationS, shared);
    stop = true;
    await batchLoop;
    if (alone.errors + beside.errors > 0)
      throw new Error(`single creates beside batches: ${JSON.stringify(beside.statusCodes)}`);
    log(
      `  single creates in the same work, ${besideConnections} connections: p99 ${alone.p99Ms} ms alone, ` +
        `${beside.p99Ms} ms while ${batchesMeanwhile} batches of 1,000 went in (${beside.rps.toFixed(0)} req/s)`,
    );
    const result: BulkResult = {
      loadAverage,
      single: { rps: single.rps, p50Ms: single.p50Ms, p99Ms: single.p99Ms },
      batches,
      speedup1000: batches[1]!.rps / single.rps,
      drain: { batchS, singlesS, emails: 1000 },
      singlesBesideBatches: {
        aloneP99Ms: alone.p99Ms,
        besideP99Ms: beside.p99Ms,
        besideRps: beside.rps,
        batchesMeanwhile,
      },
    };
    log(
      `  load average at the start ${loadAverage.map((n) => n.toFixed(1)).join(', ')}; now ${os
        .loadavg()
        .map((n) => n.toFixed(1))
        .join(', ')}`,
    );
    return result;
  } finally {
    await pg.end();
  }
}
