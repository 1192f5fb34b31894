import { PGlite } from '@electric-sql/pglite';
import {
  LARGE_DATASET_SHAPES,
  type LargeDataset,
  type LargeDatasetShape,
  type LargeDatasetShapeName,
  loadLargeDataset,
  nthNewestRequestId,
} from '@works-api/prisma/seed';
import {
  applyMigrations,
  parseEncryptionKeys,
  PGLITE_EXTENSIONS,
  pgliteSession,
  SecretBox,
  type SqlSession,
  withPgSession,
} from '@works-api/prisma';
import { Cursors } from '@works-api/server/domain/cursors';
import { CursorEdge } from '@works-api/server/http/cursors';
import { loadSpec } from '@works-api/server/http/spec';
import { readdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { callApi, type Fixtures } from './fixtures';
import { Client } from 'pg';
import { benchEncryptionKeys, cpuMsOf, delay, type Service } from './processes';
import type { Measurement } from './report';
import type { Scenario, Target } from './scenarios';

/**
 * `pnpm bench -- --scale`: every scenario on an empty database, then the same scenarios on the large
 * data set (prisma/src/seed/large-dataset.ts), loaded with SQL in the same run, and the two side by side.
 * The real server in both phases, no baseline: what is compared is the server with itself as the data grows.
 */
export interface ScaleScenarioResult {
  id: string;
  title: string;
  kind: Scenario['kind'];
  empty: Measurement;
  large: Measurement;
  /** Large req/s ÷ empty req/s. */
  ratio: number;
  note?: string;
}

export interface ScaleResult {
  id: 'postgres' | 'pglite';
  title: string;
  shapeName: LargeDatasetShapeName;
  shape: LargeDatasetShape;
  /** Wall time of the load (migrations excluded, the final VACUUM ANALYZE included), and its steps. */
  loadMs: number;
  loadSteps: Array<{ step: string; ms: number }>;
  /** Size of the database after the load (PostgreSQL: pg_database_size; PGlite: its folder). */
  sizeBytes?: number;
  /** Where the deep page starts: after this many of the read work's requests, newest first. */
  deepPosition: { empty: number; large: number };
  scenarios: ScaleScenarioResult[];
  /** PostgreSQL only: the read scenarios measured while the janitors clear the data set's backlog. */
  duringCleanup?: DuringCleanup;
}

/** Expired rows the janitors have to delete (idempotency keys past expiry; webhook history past 30 days). */
export interface ExpiredRows {
  idempotencyKeys: number;
  webhookEvents: number;
  webhookDeliveries: number;
}

export interface DuringCleanup {
  /** Expired rows when the server started, when the measurements under clean-up ended, and at the end. */
  before: ExpiredRows;
  afterMeasuring: ExpiredRows;
  after: ExpiredRows;
  /** From the server's start until no expired row was left (undefined: not within the wait). */
  cleanupMs?: number;
  scenarios: Array<{ id: string; title: string; during: Measurement; settled: Measurement }>;
}

export interface ScaleHooks {
  log: (line: string) => void;
  startServer(name: string, env: Record<string, string>): Promise<Service>;
  /** Empties the PostgreSQL database (DROP SCHEMA public). */
  resetPostgres(url: string): Promise<unknown>;
  /** The bench's usual fixtures, created through the API. */
  createFixtures(url: string): Promise<Fixtures>;
  /** One scenario measured as the plain bench does (warm-up, run, rounds → median), server only. */
  measure(scenario: Scenario, service: Service, target: Target): Promise<Measurement>;
  /** A folder of the run's own, removed at the end. */
  workDir: string;
}

/** The popular name of the empty phase: the large data set's 20k tenants have it too ("Acme"). */
const POPULAR_NAME = 'Acme';
/** On the empty database: after the 5th of the fixture work's 25 requests, so the page is full. */
const EMPTY_DEEP_POSITION = 5;
/** On the large data set: 90% of the way into the big work's requests (900,000 of 1M). */
const LARGE_DEEP_FRACTION = 0.9;

export async function scalePostgres(
  url: string,
  shapeName: LargeDatasetShapeName,
  chosen: Scenario[],
  hooks: ScaleHooks,
): Promise<ScaleResult> {
  const { log } = hooks;
  const shape = LARGE_DATASET_SHAPES[shapeName];
  log(`\n== scale, PostgreSQL: empty database`);
  await hooks.resetPostgres(url);
  const empty = await hooks.startServer('works-api (PostgreSQL, empty)', { DATABASE_URL: url });
  let emptyResults: Map<string, Measurement>;
  try {
    emptyResults = await runPhase(chosen, empty, await emptyFixtures(empty.url, hooks), hooks);
  } finally {
    await empty.stop();
  }

  log(`\n== scale, PostgreSQL: loading the large data set (${shapeName} shape)`);
  await hooks.resetPostgres(url);
  const loaded = await withPgSession(url, async (session) => {
    await applyMigrations(session);
    const result = await load(session, shape, log);
    const [size] = await session.query<{ bytes: string }>('SELECT pg_database_size(current_database()) AS bytes');
    return { ...result, sizeBytes: Number(size?.bytes) };
  });
  log(`  loaded in ${(loaded.loadMs / 1000).toFixed(1)} s, database ${gb(loaded.sizeBytes)}`);

  const duringCleanup = await measureDuringCleanup(url, chosen, largeFixtures(loaded), hooks);

  log(`\n== scale, PostgreSQL: large data set`);
  const large = await hooks.startServer('works-api (PostgreSQL, large)', { DATABASE_URL: url });
  try {
    await settle(large, url);
    const largeResults = await runPhase(chosen, large, largeFixtures(loaded), hooks);
    return {
      ...result('postgres', 'PostgreSQL, one server process', shapeName, loaded, chosen, emptyResults, largeResults),
      ...(duringCleanup && { duringCleanup }),
    };
  } finally {
    await large.stop();
  }
}

export async function scalePglite(
  shapeName: LargeDatasetShapeName,
  chosen: Scenario[],
  hooks: ScaleHooks,
): Promise<ScaleResult> {
  const { log } = hooks;
  const shape = LARGE_DATASET_SHAPES[shapeName];
  const emptyDir = path.join(hooks.workDir, 'scale-pglite-empty');
  const largeDir = path.join(hooks.workDir, 'scale-pglite-large');
  try {
    log(`\n== scale, embedded PGlite: empty database`);
    const empty = await hooks.startServer('works-api (PGlite, empty)', { PGLITE_DIR: emptyDir });
    let emptyResults: Map<string, Measurement>;
    try {
      emptyResults = await runPhase(chosen, empty, await emptyFixtures(empty.url, hooks), hooks);
    } finally {
      await empty.stop();
    }
    rmSync(emptyDir, { recursive: true, force: true });

    // PGlite belongs to one process: load the folder here, close it, then start the server on it.
    log(`\n== scale, embedded PGlite: loading the large data set (${shapeName} shape)`);
    const pglite = new PGlite(largeDir, { extensions: PGLITE_EXTENSIONS });
    let loaded: Loaded;
    try {
      const session = pgliteSession(pglite);
      await applyMigrations(session);
      loaded = await load(session, shape, log);
    } finally {
      await pglite.close();
    }
    loaded.sizeBytes = folderBytes(largeDir);
    log(`  loaded in ${(loaded.loadMs / 1000).toFixed(1)} s, folder ${gb(loaded.sizeBytes)}`);

    log(`\n== scale, embedded PGlite: large data set`);
    const large = await hooks.startServer('works-api (PGlite, large)', { PGLITE_DIR: largeDir });
    try {
      await settle(large);
      const largeResults = await runPhase(chosen, large, largeFixtures(loaded), hooks);
      return result(
        'pglite',
        'Embedded PGlite, one server process',
        shapeName,
        loaded,
        chosen,
        emptyResults,
        largeResults,
      );
    } finally {
      await large.stop();
    }
  } finally {
    rmSync(emptyDir, { recursive: true, force: true });
    rmSync(largeDir, { recursive: true, force: true });
  }
}

interface Loaded {
  dataset: LargeDataset;
  loadMs: number;
  deepPosition: number;
  deepCursor: string;
  sizeBytes?: number;
}

async function load(session: SqlSession, shape: LargeDatasetShape, log: (line: string) => void): Promise<Loaded> {
  const started = Date.now();
  const dataset = await loadLargeDataset(session, shape);
  const loadMs = Date.now() - started;
  for (const { step, ms } of dataset.timings) log(`  ${step.padEnd(28)} ${(ms / 1000).toFixed(1).padStart(6)} s`);
  const deepPosition = Math.max(1, Math.floor(shape.bigWorkRequests * LARGE_DEEP_FRACTION));
  // The cursor the server would hand out for that request (signed with the keys the bench gives every server).
  const cursors = new Cursors(new SecretBox(parseEncryptionKeys(benchEncryptionKeys())).derivedKeys('cursor'));
  const deepCursor = new CursorEdge(loadSpec(), cursors).cursorOf(
    { operationId: 'listRequests', path: { tenant_id: dataset.bigTenantId, work_id: dataset.bigWorkId } },
    await nthNewestRequestId(session, dataset.bigWorkId, deepPosition),
  );
  return { dataset, loadMs, deepPosition, deepCursor };
}

/** The bench's fixtures, plus the popular name and a cursor a few requests into the read work. */
async function emptyFixtures(url: string, hooks: ScaleHooks): Promise<Fixtures> {
  const fixtures = await hooks.createFixtures(url);
  const { requests: page } = await callApi<{ requests: { pageInfo: { endCursor: string | null } } }>(
    url,
    fixtures.apiKey,
    'GET',
    `/v1/tenants/${fixtures.readTenantId}/works/${fixtures.readWorkId}/requests?limit=${EMPTY_DEEP_POSITION}`,
  );
  if (!page.pageInfo.endCursor) throw new Error('bench set-up: the fixture work has no requests');
  return { ...fixtures, scale: { popularName: POPULAR_NAME, deepCursor: page.pageInfo.endCursor } };
}

/**
 * The same roles on the large data set: the heavy user (100k tenants, 1,001 API keys) reads and writes the big
 * tenant (200k works, 101 members) and its big work (1M requests).
 */
function largeFixtures({ dataset, deepCursor }: Loaded): Fixtures {
  return {
    apiKey: dataset.heavyUser.apiKey,
    // The scale mode compares data sizes, not keys: its restricted scenarios send the full key on the large data set.
    restrictedApiKey: dataset.heavyUser.apiKey,
    readTenantId: dataset.bigTenantId,
    readWorkId: dataset.bigWorkId,
    writeTenantId: dataset.bigTenantId,
    requestWorkId: dataset.bigWorkId,
    scale: { popularName: dataset.popularName, deepCursor },
  };
}

async function runPhase(
  chosen: Scenario[],
  server: Service,
  fixtures: Fixtures,
  hooks: ScaleHooks,
): Promise<Map<string, Measurement>> {
  const target: Target = { fixtures, pool: [] };
  const results = new Map<string, Measurement>();
  for (const scenario of inScaleOrder(chosen)) {
    const measured = await hooks.measure(scenario, server, target);
    results.set(scenario.id, measured);
    hooks.log(
      `  ${scenario.title.padEnd(30)} ${measured.rps.toFixed(0).padStart(6)} req/s   p99 ${measured.p99Ms.toFixed(0).padStart(5)} ms` +
        (measured.errors > 0 ? `   (errors: ${JSON.stringify(measured.statusCodes)})` : ''),
    );
  }
  return results;
}

/**
 * Reads first, then writes, then the mix: the writes add rows (create tenant adds a thousand tenants to the user
 * whose tenants list tenants reads), and "empty" should mean empty, not "after the writes of this run". The
 * popular-name create comes last: where it is slower than the client's 10 s timeout, the server is still working
 * on the abandoned requests after its run, and that would weigh on the next scenario.
 */
export function inScaleOrder(chosen: Scenario[]): Scenario[] {
  const rank = (s: Scenario) => (s.id === 'create-popular-tenant' ? 3 : { read: 0, write: 1, mixed: 2 }[s.kind]);
  return [...chosen].sort((a, b) => rank(a) - rank(b));
}

const SETTLE_MAX_MS = 90_000;

/**
 * The first clean-up rounds start with the server (up to 20,000 expired idempotency keys, 10,000 webhook events of
 * the data set): wait until they are over, or they weigh on the first scenario. Quiet means, for two seconds in a
 * row: no other statement running on the database (PostgreSQL), and the server process below 5% of a core (PGlite
 * runs in it). Bounded: after 90 s the run goes on.
 */
async function settle(server: Service, postgresUrl?: string): Promise<void> {
  const deadline = Date.now() + SETTLE_MAX_MS;
  const client = postgresUrl ? new Client({ connectionString: postgresUrl }) : undefined;
  await client?.connect();
  try {
    let quiet = 0;
    while (quiet < 4 && Date.now() < deadline) {
      const cpuBefore = cpuMsOf(server.pid);
      await delay(500);
      const busyCpu = cpuMsOf(server.pid) - cpuBefore > 25;
      const busyDb = client
        ? Number(
            (
              await client.query<{ n: string }>(
                `SELECT count(*) AS n FROM pg_stat_activity
                 WHERE datname = current_database() AND pid <> pg_backend_pid() AND state = 'active'`,
              )
            ).rows[0]?.n,
          ) > 0
        : false;
      quiet = busyCpu || busyDb ? 0 : quiet + 1;
    }
  } finally {
    await client?.end();
  }
}

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
async function measureDuringCleanup(
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

function result(
  id: ScaleResult['id'],
  title: string,
  shapeName: LargeDatasetShapeName,
  loaded: Loaded,
  chosen: Scenario[],
  empty: Map<string, Measurement>,
  large: Map<string, Measurement>,
): ScaleResult {
  return {
    id,
    title,
    shapeName,
    shape: loaded.dataset.shape,
    loadMs: loaded.loadMs,
    loadSteps: loaded.dataset.timings,
    sizeBytes: loaded.sizeBytes,
    deepPosition: { empty: EMPTY_DEEP_POSITION, large: loaded.deepPosition },
    scenarios: inScaleOrder(chosen).map((scenario) => {
      const e = empty.get(scenario.id)!;
      const l = large.get(scenario.id)!;
      const notes = [
        [e, l].some((m) => m.errors > 0)
          ? `errors (non-2xx, timeouts): empty ${e.errors} (answers ${JSON.stringify(e.statusCodes)}), ` +
            `large ${l.errors} (answers ${JSON.stringify(l.statusCodes)})`
          : undefined,
        e.note && `empty: ${e.note}`,
        l.note && `large: ${l.note}`,
      ].filter(Boolean);
      const errors = notes.length > 0 ? notes.join('; ') : undefined;
      return {
        id: scenario.id,
        title: scenario.title,
        kind: scenario.kind,
        empty: e,
        large: l,
        ratio: e.rps > 0 ? l.rps / e.rps : 0,
        ...(errors && { note: errors }),
      };
    }),
  };
}

const num = (value: number, digits = 0) =>
  value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
const gb = (bytes?: number) =>
  bytes === undefined || !Number.isFinite(bytes) ? '?' : `${(bytes / 1024 ** 3).toFixed(2)} GB`;

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

/** The side-by-side table, as Markdown (it goes into docs/benchmarks.md as it is). */
export function formatScale(result: ScaleResult): string {
  const { shape } = result;
  const rows = [
    ['scenario', 'empty: req/s', 'empty: p99', 'large: req/s', 'large: p99', 'large ÷ empty'],
    ['---', '---:', '---:', '---:', '---:', '---:'],
    ...result.scenarios.map((s) => [
      s.title,
      num(s.empty.rps),
      `${num(s.empty.p99Ms)} ms`,
      num(s.large.rps),
      `${num(s.large.p99Ms)} ms`,
      s.ratio.toFixed(2),
    ]),
  ];
  const widths = rows[0]!.map((_, col) => Math.max(...rows.map((row) => row[col]!.length)));
  const lines = rows.map(
    (row) =>
      `| ${row.map((cell, col) => (col === 0 ? cell.padEnd(widths[col]!) : cell.padStart(widths[col]!))).join(' | ')} |`,
  );
  return [
    `${result.title}: empty database vs the large data set (${result.shapeName} shape: ${num(shape.heavyUserTenants)} tenants of one user, ` +
      `${num(shape.popularNameTenants)} named "Acme", ${num(shape.bigTenantWorks)} works in one tenant, ` +
      `${num(shape.bigWorkRequests)} requests in one work), loaded in ${(result.loadMs / 1000).toFixed(0)} s (${gb(result.sizeBytes)})`,
    ...lines,
    `  the deep page starts after request ${num(result.deepPosition.empty)} (empty) and ${num(result.deepPosition.large)} (large)`,
    ...result.scenarios.filter((s) => s.note).map((s) => `  note (${s.title}): ${s.note}`),
  ].join('\n');
}

/** The scale targets on PostgreSQL: at least 80% of the empty database's throughput, p99 under 50 ms. */
export function scaleTargets(result: ScaleResult): Array<{ target: string; value: string; met: boolean }> {
  if (result.id !== 'postgres') return [];
  return result.scenarios.flatMap((s) => [
    {
      target: `${s.title}: large at least 80% of empty throughput`,
      value: `${(s.ratio * 100).toFixed(0)}%`,
      met: s.ratio >= 0.8 && s.large.errors === 0,
    },
    {
      target: `${s.title}: large p99 under 50 ms`,
      value: `${s.large.p99Ms.toFixed(0)} ms`,
      met: s.large.p99Ms < 50 && s.large.errors === 0,
    },
  ]);
}

function folderBytes(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    total += entry.isDirectory() ? folderBytes(full) : statSync(full).size;
  }
  return total;
}
