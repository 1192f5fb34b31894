import { type ChildProcess, fork } from 'node:child_process';
import path from 'node:path';
import type { Fixtures } from './fixtures';
import { runLoad } from './load';
import type { Options } from './options';
import { cpuMsOf, type Service } from './processes';
import type { Scenario, Target } from './scenarios';

/**
 * `pnpm bench --webhooks`: what signed webhooks cost the write path, and how fast they arrive. The write scenarios
 * run on one server, in turn without and with an endpoint subscribed to every event of the tenant they write into
 * (a healthy receiver on loopback, in its own process); the endpoint is toggled through the API between runs.
 * For the runs with it: delivery lag (arrival minus the change's time) p50/p99, and whether every event arrived.
 */
export interface WebhookScenarioResult {
  id: string;
  title: string;
  withoutRps: number;
  withRps: number;
  ratio: number;
  /** Server CPU per request, the dispatcher's work included (until the run's events were delivered). */
  withoutCpuMs?: number;
  withCpuMs?: number;
  /** Events the run produced that reached the receiver (after the drain), and duplicates among them. */
  delivered: number;
  duplicates: number;
  lagP50Ms?: number;
  lagP99Ms?: number;
}

interface Receiver {
  url: string;
  lags(): Promise<{ lags: number[]; duplicates: number }>;
  stop(): void;
}

async function startReceiver(): Promise<Receiver> {
  const child: ChildProcess = fork(path.join(__dirname, 'webhook-receiver.js'), [], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const { port } = await new Promise<{ port: number }>((resolve) =>
    child.once('message', (m) => resolve(m as { port: number })),
  );
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    lags: () =>
      new Promise((resolve) => {
        child.once('message', (m) => resolve(m as { lags: number[]; duplicates: number }));
        child.send('lags');
      }),
    stop: () => child.kill('SIGTERM'),
  };
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))];

/**
 * Runs the write scenarios against `server` (started with WEBHOOK_ALLOW_PRIVATE_URLS=true). `eventsOf` says how
 * many events a run of N responses produces (creates and actions: one each; tenants and works: none).
 */
export async function webhookComparison(
  server: Service,
  fixtures: Fixtures,
  chosen: Scenario[],
  options: Options,
  prepare: (scenario: Scenario, target: Target, durationS: number) => Promise<number | undefined>,
  log: (line: string) => void,
): Promise<WebhookScenarioResult[]> {
  const receiver = await startReceiver();
  const api = async (method: string, url: string, body?: unknown) => {
    const res = await fetch(server.url + url, {
      method,
      headers: { Authorization: `Bearer ${fixtures.apiKey}`, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${await res.text()}`);
    return (await res.json()) as { webhookEndpoint: { id: string } };
  };
  const endpointsUrl = `/v1/tenants/${fixtures.writeTenantId}/webhook-endpoints`;
  const { webhookEndpoint } = await api('POST', endpointsUrl, { url: receiver.url, enabled: false });
  const setEnabled = (enabled: boolean) => api('PATCH', `${endpointsUrl}/${webhookEndpoint.id}`, { enabled });
  const target: Target = { fixtures, pool: [] };
  const results: WebhookScenarioResult[] = [];
  try {
    for (const scenario of chosen.filter((s) => s.kind === 'write')) {
      const producesEvents = scenario.id === 'create-request' || scenario.requestsPerPending !== undefined;
      const without: number[] = [];
      const withIt: number[] = [];
      const cpu = { without: [] as number[], with: [] as number[] };
      const lags: number[] = [];
      let delivered = 0;
      let expected = 0;
      let duplicates = 0;
      for (let round = 1; round <= options.rounds; round++) {
        for (const subscribed of [false, true]) {
          await setEnabled(subscribed);
          const run = async (durationS: number) => {
            // The pool top-up (confirm-validate) happens before the measured part, CPU included.
            const amount = await prepare(scenario, target, durationS);
            const cpuBefore = cpuMsOf(server.pid);
            const result = await runLoad({
              url: server.url,
              requests: scenario.requests(target),
              connections: options.connections,
              durationS,
              amount,
            });
            return { result, cpuBefore };
          };
          if (options.warmupS > 0) await run(options.warmupS);
          await receiver.lags(); // what arrived so far (warm-up) does not count
          const { result: measured, cpuBefore } = await run(options.durationS);
          (subscribed ? withIt : without).push(measured.rps);
          // With an endpoint, until the dispatcher has delivered what the run produced (no arrival for 1 s, or 30 s).
          const arrived: number[] = [];
          let duplicatesNow = 0;
          if (subscribed && producesEvents) {
            const deadline = Date.now() + 30_000;
            for (let quiet = 0; quiet < 5 && Date.now() < deadline;) {
              await new Promise((resolve) => setTimeout(resolve, 200));
              const more = await receiver.lags();
              arrived.push(...more.lags);
              duplicatesNow += more.duplicates;
              quiet = more.lags.length === 0 ? quiet + 1 : 0;
            }
          } else {
            await receiver.lags();
          }
          cpu[subscribed ? 'with' : 'without'].push((cpuMsOf(server.pid) - cpuBefore) / Math.max(1, measured.requests));
          if (!subscribed || !producesEvents) continue;
          expected += measured.requests - measured.errors;
          lags.push(...arrived);
          delivered += arrived.length;
          duplicates += duplicatesNow;
        }
      }
      await setEnabled(false);
      const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)]!;
      const sorted = lags.sort((a, b) => a - b);
      const result: WebhookScenarioResult = {
        id: scenario.id,
        title: scenario.title,
        withoutRps: median(without),
        withRps: median(withIt),
        ratio: median(withIt) / median(without),
        withoutCpuMs: median(cpu.without),
        withCpuMs: median(cpu.with),
        delivered: producesEvents ? delivered : 0,
        duplicates,
        ...(sorted.length > 0 && { lagP50Ms: percentile(sorted, 50), lagP99Ms: percentile(sorted, 99) }),
      };
      // Events of warm-ups and pool top-ups arrive too, so `delivered` may exceed what the measured runs made.
      if (producesEvents && delivered < expected)
        log(`  ${scenario.title}: only ${delivered} of ${expected} events arrived`);
      results.push(result);
      log(
        `  ${scenario.title.padEnd(20)} without ${result.withoutRps.toFixed(0).padStart(5)} req/s   with ${result.withRps.toFixed(0).padStart(5)} req/s   ` +
          `ratio ${(result.ratio * 100).toFixed(0)}%   CPU ${result.withoutCpuMs?.toFixed(2)} → ${result.withCpuMs?.toFixed(2)} ms/req` +
          (producesEvents
            ? `   delivered ${delivered} (≥ ${expected} made in the measured runs), ${duplicates} duplicates   lag p50 ${result.lagP50Ms ?? '-'} ms, p99 ${result.lagP99Ms ?? '-'} ms`
            : '   (no events)'),
      );
    }
  } finally {
    receiver.stop();
  }
  return results;
}

export function formatWebhooks(results: WebhookScenarioResult[]): string {
  const rows = results.map((r) => [
    r.title,
    r.withoutRps.toFixed(0),
    r.withRps.toFixed(0),
    `${(r.ratio * 100).toFixed(0)}%`,
    r.ratio >= 0.9 ? 'met' : 'missed',
    `${r.withoutCpuMs?.toFixed(2) ?? '-'} → ${r.withCpuMs?.toFixed(2) ?? '-'}`,
    r.delivered > 0 ? String(r.delivered) : '-',
    r.lagP50Ms === undefined ? '-' : `${r.lagP50Ms} ms`,
    r.lagP99Ms === undefined ? '-' : `${r.lagP99Ms} ms`,
  ]);
  const header = [
    'webhooks (PostgreSQL, 1 process)',
    'without req/s',
    'with req/s',
    'ratio',
    '≥ 90%',
    'CPU ms/req',
    'delivered',
    'lag p50',
    'lag p99',
  ];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) =>
    `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(' | ')} |`;
  return [
    line(header),
    `| ${widths.map((w, i) => (i === 0 ? '-'.repeat(w) : `${'-'.repeat(w - 1)}:`)).join(' | ')} |`,
    ...rows.map(line),
  ].join('\n');
}
