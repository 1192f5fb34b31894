import { Client } from 'pg';
import type { Fixtures } from './fixtures';
import { delay } from './processes';
import { inScaleOrder, runPhase, settle } from './scale-phases';
import { num } from './scale-report';
import type { DuringCleanup, ExpiredRows, ScaleHooks, ScaleResult } from './scale-types';
import type { Scenario } from './scenarios';

// The scale mode's clean-up phase on PostgreSQL: reads measured while the janitors clear the data set's backlog.

/** The read scenarios of the clean-up phase (a couple, so the phase stays short), of those chosen. */
const CLEANUP_SCENARIOS = ['get-tenant', 'list-works'];
/** The janitors of the clean-up phase run every second (the shortest interval allowed), not every 10 min / 1 h. */
const CLEANUP_ENV = { IDEMPOTENCY_CLEANUP_INTERVAL_MS: '1000', WEBHOOK_HISTORY_CLEANUP_INTERVAL_MS: '1000' };
const CLEANUP_MAX_WAIT_MS = 300_000;

/**
 * Start the server on the freshly loaded data set WITHOUT waiting for the clean-up, its janitors
 * set to run every second so that they clear the whole backlog (300k expired idempotency keys, 300k webhook events
 * and deliveries past retention) instead of one bounded round per 10 minutes / hour; measure a couple of reads
 * while they work, wait until no expired row is left (bounded), and measure the same reads again.
 */
export async function measureDuringCleanup(
  url: string,
  chosen: Scenario[],
  fixtures: Fixtures,
  hooks: ScaleHooks,
): Promise<DuringCleanup | undefined> {
  const reads = chosen.filter((s) => CLEANUP_SCENARIOS.includes(s.id));
  if (reads.length === 0) return undefined;
  const { log } = hooks;
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    log(`\n== scale, PostgreSQL: large data set, during the clean-up (janitors every second)`);
    const before = await expiredRows(client);
    const started = Date.now();
    const server = await hooks.startServer('works-api (PostgreSQL, large, clean-up)', {
      DATABASE_URL: url,
      ...CLEANUP_ENV,
    });
    try {
      log(`  expired rows at start: ${formatExpired(before)}`);
      const during = await runPhase(reads, server, fixtures, hooks);
      const afterMeasuring = await expiredRows(client);
      log(
        `  expired rows after those runs (${((Date.now() - started) / 1000).toFixed(0)} s): ${formatExpired(afterMeasuring)}`,
      );
      let after = afterMeasuring;
      while (total(after) > 0 && Date.now() - started < CLEANUP_MAX_WAIT_MS) {
        await delay(500);
        after = await expiredRows(client);
      }
      const cleanupMs = total(after) === 0 ? Date.now() - started : undefined;
      log(
        cleanupMs === undefined
          ? `  clean-up NOT over after ${CLEANUP_MAX_WAIT_MS / 1000} s: ${formatExpired(after)}`
          : `  clean-up over ${(cleanupMs / 1000).toFixed(1)} s after the server started`,
      );
      await settle(server, url);
      log(`  the same reads, clean-up over:`);
      const settled = await runPhase(reads, server, fixtures, hooks);
      return {
        before,
        afterMeasuring,
        after,
        ...(cleanupMs !== undefined && { cleanupMs }),
        scenarios: inScaleOrder(reads).map((s) => ({
          id: s.id,
          title: s.title,
          during: during.get(s.id)!,
          settled: settled.get(s.id)!,
        })),
      };
    } finally {
      await server.stop();
    }
  } finally {
    await client.end();
  }
}

/** What the janitors would delete now: the same conditions as theirs (expires_at passed; older than 30 days). */
async function expiredRows(client: Client): Promise<ExpiredRows> {
  const { rows } = await client.query<{ keys: string; events: string; deliveries: string }>(
    `SELECT (SELECT count(*) FROM idempotency_keys WHERE expires_at <= now()) AS keys,
            (SELECT count(*) FROM webhook_events WHERE created_at < now() - interval '30 days') AS events,
            (SELECT count(*) FROM webhook_deliveries WHERE created_at < now() - interval '30 days') AS deliveries`,
  );
  const row = rows[0]!;
  return {
    idempotencyKeys: Number(row.keys),
    webhookEvents: Number(row.events),
    webhookDeliveries: Number(row.deliveries),
  };
}

const total = (rows: ExpiredRows) => rows.idempotencyKeys + rows.webhookEvents + rows.webhookDeliveries;
const formatExpired = (rows: ExpiredRows) =>
  `${num(rows.idempotencyKeys)} idempotency keys, ${num(rows.webhookEvents)} webhook events, ` +
  `${num(rows.webhookDeliveries)} deliveries`;

/** The clean-up phase's table, as Markdown (empty when the phase did not run). */
export function formatDuringCleanup(result: ScaleResult): string {
  const phase = result.duringCleanup;
  if (!phase) return '';
  const rows = [
    ['scenario', 'during clean-up: req/s', 'p99', 'clean-up over: req/s', 'p99', 'during ÷ over'],
    ['---', '---:', '---:', '---:', '---:', '---:'],
    ...phase.scenarios.map(({ title, during, settled }) => [
      title,
      num(during.rps),
      `${num(during.p99Ms)} ms`,
      num(settled.rps),
      `${num(settled.p99Ms)} ms`,
      settled.rps > 0 ? (during.rps / settled.rps).toFixed(2) : '-',
    ]),
  ];
  return [
    `${result.title}, while the janitors (every second) clear the data set's backlog:`,
    `expired rows at the server's start: ${formatExpired(phase.before)}; after the runs under clean-up: ` +
      `${formatExpired(phase.afterMeasuring)}; ` +
      (phase.cleanupMs === undefined
        ? `NOT cleared within ${CLEANUP_MAX_WAIT_MS / 1000} s (${formatExpired(phase.after)} left)`
        : `all cleared ${(phase.cleanupMs / 1000).toFixed(1)} s after the server started`),
    '',
    ...rows.map((cells) => `| ${cells.join(' | ')} |`),
  ].join('\n');
}
