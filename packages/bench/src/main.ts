import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { createFixtures, type Fixtures } from './fixtures';
import { type CredentialRow, credentialPairs, formatCredentials, signInForBench } from './credentials';
import { runLoad } from './load';
import { type Options, parseOptions } from './options';
import { runPaced } from './paced';
import { auditReads, createAuditData } from './read-audit';
import {
  baselineMain,
  cpuMsOf,
  repoRoot,
  rssOf,
  sampleRss,
  sampleRssStats,
  serverMain,
  type Service,
  startService,
} from './processes';
import { formatProfile, summarizeProfile, type ProfileSummary } from './profile';
import {
  type BenchReport,
  checkTargets,
  formatCluster,
  formatComparison,
  formatMode,
  formatSoak,
  formatTargets,
  type Measurement,
  type ModeResult,
  type ScenarioResult,
  type SoakPoint,
} from './report';
import {
  formatDuringCleanup,
  formatScale,
  type ScaleHooks,
  scalePglite,
  scalePostgres,
  type ScaleResult,
  scaleTargets,
} from './scale';
import { restrictedPairs, type Scenario, type ScenarioId, scaleScenarios, scenarios, type Target } from './scenarios';
import { formatWebhooks, webhookComparison, type WebhookScenarioResult } from './webhooks';
import { hotParentComparison, type HotParentRow } from './hot-parent';
import { bulkComparison, type BulkResult } from './bulk';

/**
 * `pnpm bench`: starts the built server (packages/server/dist/main.js) on loopback, creates its data through the
 * API, and drives each scenario with autocannon next to the baseline (src/baseline/server.ts) on the same data.
 * Prints a table with ratios to the baseline and writes everything to bench-results/<time>.json.
 */
const ADMIN_TOKEN = randomBytes(24).toString('hex');
const runId = Date.now().toString(36);
const resultsDir = path.join(repoRoot, 'bench-results');
const work = mkdtempSync(path.join(os.tmpdir(), 'works-api-bench-'));
const log = (line: string) => console.log(line);

let serverNodeArgs: string[] = [];

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  serverNodeArgs = options.serverNodeArgs;
  if (!existsSync(serverMain)) throw new Error(`${serverMain} is missing: run pnpm build first (pnpm bench does)`);
  const startedAt = new Date();
  const report: BenchReport & {
    queries?: unknown;
    profiles?: Record<string, ProfileSummary>;
    webhooks?: WebhookScenarioResult[];
    scale?: ScaleResult[];
    hotParent?: HotParentRow[];
    bulk?: BulkResult;
    credentials?: CredentialRow[];
  } = {
    startedAt: startedAt.toISOString(),
    commit: gitCommit(),
    machine: machine(),
    options: { ...options, postgresUrl: redact(options.postgresUrl) },
    modes: [],
  };
  const chosen = [...scenarios, ...scaleScenarios].filter((s) => options.scenarios.includes(s.id));

  const pgVersion = options.databases.includes('postgres') ? await preparePostgres(options.postgresUrl) : undefined;
  if (pgVersion) report.machine.postgres = pgVersion;
  const needsPostgres =
    options.soak ||
    options.profile ||
    options.countQueries ||
    options.webhooks ||
    options.hotParent === 'only' ||
    options.bulk === 'only';
  if (needsPostgres && !pgVersion)
    throw new Error('--soak, --profile, --count-queries, --webhooks, --hot-parent and --bulk need PostgreSQL');

  if (options.scale) {
    report.scale = await scale(options, chosen, pgVersion);
    log(
      `\nscale mode: ${options.connections} connections, ${options.durationS} s per run (after ${options.warmupS} s of warm-up)`,
    );
    log(
      `machine: ${report.machine.cpu} x${report.machine.cpus}, ${report.machine.memory}, Node ${report.machine.node}` +
        (pgVersion ? `, PostgreSQL ${pgVersion}` : ''),
    );
    for (const result of report.scale) {
      log(`\n${formatScale(result)}`);
      if (result.duringCleanup) log(`\n${formatDuringCleanup(result)}`);
    }
  } else if (options.soak) {
    report.soak = await soak(options);
    log(`\n${formatSoak(report.soak)}`);
  } else if (options.profile) {
    report.profiles = await profile(options, chosen);
  } else if (options.countQueries) {
    report.queries = await countQueries(options, chosen);
  } else if (options.hotParent === 'only') {
    report.hotParent = await hotParent(options);
  } else if (options.bulk === 'only') {
    report.bulk = await bulk(options);
  } else if (options.webhooks) {
    report.webhooks = await webhooks(options, chosen);
    log(`\n${formatWebhooks(report.webhooks)}`);
  } else if (options.credentials === 'only') {
    report.credentials = await credentials(options);
    log(`\n${formatCredentials(report.credentials)}`);
  } else {
    if (pgVersion) {
      const [single, double] = await postgresModes(options, chosen);
      report.modes.push(single);
      if (double) report.modes.push(double);
    }
    if (options.databases.includes('pglite') && !options.against) report.modes.push(await pgliteMode(options, chosen));
    log(
      `\nworks-api vs baseline (node:http + the driver, same SQL), ${options.connections} connections, ${options.durationS} s per run`,
    );
    log(
      `machine: ${report.machine.cpu} x${report.machine.cpus}, ${report.machine.memory}, Node ${report.machine.node}`,
    );
    for (const mode of report.modes) log(`\n${formatMode(mode)}`);
    const single = report.modes.find((m) => m.id === 'postgres');
    const double = report.modes.find((m) => m.id === 'postgres-2-workers');
    if (single && double) log(`\n${formatCluster(single, double)}`);
    if (pgVersion && options.hotParent === 'also' && !options.against) report.hotParent = await hotParent(options);
    if (pgVersion && options.bulk === 'also' && !options.against) report.bulk = await bulk(options);
    if (pgVersion && options.credentials === 'also' && !options.against) {
      report.credentials = await credentials(options);
      log(`\n${formatCredentials(report.credentials)}`);
    }
  }

  report.targets = checkTargets(report);
  if (report.targets.length > 0) log(`\n${formatTargets(report.targets)}`);
  const scaleChecks = (report.scale ?? []).flatMap(scaleTargets);
  if (scaleChecks.length > 0) log(`\n${formatTargets(scaleChecks).replace('Targets', 'Scale targets (PostgreSQL)')}`);
  const file = options.out ?? path.join(resultsDir, `${startedAt.toISOString().replace(/[:.]/g, '-')}.json`);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  log(`\nresults: ${path.relative(process.cwd(), file)} (${((Date.now() - startedAt.getTime()) / 1000).toFixed(0)} s)`);
  if (options.compare) {
    const before = JSON.parse(
      readFileSync(path.resolve(process.env.INIT_CWD ?? process.cwd(), options.compare), 'utf8'),
    ) as BenchReport;
    log(`\n${formatComparison(before, report)}`);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Modes

async function postgresModes(options: Options, chosen: Scenario[]): Promise<[ModeResult, ModeResult | undefined]> {
  log(`\n== PostgreSQL (${redact(options.postgresUrl)})`);
  const server = await startServer('works-api (PostgreSQL)', { DATABASE_URL: options.postgresUrl });
  let baseline: Service | undefined;
  let single: ModeResult;
  try {
    const idleRssBytes = await idleRss(server);
    const fixtures = await createFixtures(server.url, ADMIN_TOKEN, runId);
    // Another build gets a database of its own, migrated by its own migrator at start-up: its schema may be older
    // or newer than this build's, so neither could write into the other's tables.
    const againstUrl = options.against && (await againstDatabase(options.postgresUrl));
    baseline = await startService({
      name: options.against ? 'the other build' : 'baseline (pg)',
      script: options.against ?? baselineMain,
      env: { DATABASE_URL: againstUrl || options.postgresUrl, ADMIN_TOKEN, ...options.againstEnv },
      // Another build of the server runs as pnpm start runs it, like this one.
      ...(options.against && { nodeArgs: serverNodeArgs }),
      logFile: path.join(work, 'baseline-postgres.log'),
    });
    // The baseline shares this build's database and data; another build creates the same data in its own.
    const baselineFixtures = againstUrl ? await createFixtures(baseline.url, ADMIN_TOKEN, runId) : fixtures;
    const againstEnv = Object.entries(options.againstEnv)
      .map(([name, value]) => ` ${name}=${value}`)
      .join('');
    const title = options.against
      ? `PostgreSQL, one process; "baseline" = ${options.against}${againstEnv}`
      : 'PostgreSQL, one server process';
    single = await runMode(
      { id: 'postgres', title, workers: 1, idleRssBytes },
      chosen,
      options,
      fixtures,
      server,
      baseline,
      options.halfRate,
      baselineFixtures,
    );
    await baseline.stop();
    await server.stop();
    if (!options.cluster || options.against) return [single, undefined];

    log('\n== PostgreSQL, WEB_CONCURRENCY=2');
    const cluster = await startServer('works-api (PostgreSQL, 2 workers)', {
      DATABASE_URL: options.postgresUrl,
      WEB_CONCURRENCY: '2',
    });
    try {
      const double = await runMode(
        { id: 'postgres-2-workers', title: 'PostgreSQL, 2 server processes', workers: 2 },
        chosen,
        options,
        fixtures,
        cluster,
      );
      return [single, double];
    } finally {
      await cluster.stop();
    }
  } finally {
    await baseline?.stop();
    await server.stop();
  }
}

async function pgliteMode(options: Options, chosen: Scenario[]): Promise<ModeResult> {
  log('\n== embedded PGlite');
  const serverDir = path.join(work, 'pglite-server');
  const baselineDir = path.join(work, 'pglite-baseline');
  // PGlite belongs to one process: create the data once, then give the baseline its own copy of the folder.
  const setup = await startServer('works-api (PGlite, setup)', { PGLITE_DIR: serverDir });
  let fixtures: Fixtures;
  try {
    fixtures = await createFixtures(setup.url, ADMIN_TOKEN, runId);
  } finally {
    await setup.stop();
  }
  cpSync(serverDir, baselineDir, { recursive: true });
  const server = await startServer('works-api (PGlite)', { PGLITE_DIR: serverDir });
  let baseline: Service | undefined;
  try {
    const idleRssBytes = await idleRss(server);
    baseline = await startService({
      name: 'baseline (PGlite)',
      script: baselineMain,
      env: { PGLITE_DIR: baselineDir },
      logFile: path.join(work, 'baseline-pglite.log'),
    });
    return await runMode(
      { id: 'pglite', title: 'Embedded PGlite, one server process', workers: 1, idleRssBytes },
      chosen,
      options,
      fixtures,
      server,
      baseline,
      false,
    );
  } finally {
    await baseline?.stop();
    await server.stop();
    rmSync(serverDir, { recursive: true, force: true });
    rmSync(baselineDir, { recursive: true, force: true });
  }
}

async function runMode(
  mode: Omit<ModeResult, 'scenarios'>,
  chosen: Scenario[],
  options: Options,
  fixtures: Fixtures,
  server: Service,
  baseline?: Service,
  halfRate = false,
  baselineFixtures: Fixtures = fixtures,
): Promise<ModeResult> {
  const serverTarget: Target = { fixtures, pool: [] };
  const baselineTarget: Target = { fixtures: baselineFixtures, pool: [] };
  const results: ScenarioResult[] = [];
  const measuredRounds = new Map<ScenarioId, Measurement[]>();
  // A restricted-key scenario after its full-key partner, which measures both.
  const isRestricted = (s: Scenario) => restrictedPairs.some(({ restricted }) => restricted === s.id);
  const ordered = [...chosen.filter((s) => !isRestricted(s)), ...chosen.filter(isRestricted)];
  for (const scenario of ordered) {
    const pair = restrictedPairs.find(({ restricted }) => restricted === scenario.id);
    const partner = pair && chosen.find((s) => s.id === pair.full);
    if (partner) {
      // Measured in turn with its partner (below, when the partner came up): compared round by round.
      const result = results.find((r) => r.id === scenario.id)!;
      const ratios = measuredRounds
        .get(scenario.id)!
        .map((r, i) => (r.cpuMsPerRequest ?? NaN) / (measuredRounds.get(partner.id)![i]!.cpuMsPerRequest ?? NaN))
        .filter((ratio) => Number.isFinite(ratio))
        .sort((a, b) => a - b);
      if (ratios.length > 0) result.cpuVsFullKey = ratios[Math.floor((ratios.length - 1) / 2)]!;
      continue;
    }
    const restrictedTwin = restrictedPairs.find(({ full }) => full === scenario.id);
    const twin = restrictedTwin && chosen.find((s) => s.id === restrictedTwin.restricted);
    // A full-key scenario whose restricted twin is chosen too: the two in turn each round, the first of them
    // alternating, so that warm-up and bursts of other work fall on both alike.
    const unit = twin ? [scenario, twin] : [scenario];
    const serverRounds = new Map(unit.map((s) => [s.id, [] as Measurement[]]));
    const baselineRounds = new Map(unit.map((s) => [s.id, [] as Measurement[]]));
    const halves = new Map<ScenarioId, ScenarioResult['halfRate']>();
    // A pair is compared at a few percent: both are run once first, unmeasured, so that neither is measured while
    // the process is still compiling the code the other one warmed.
    if (twin) for (const each of unit) await measure(each, server, serverTarget, options, false);
    for (let round = 1; round <= options.rounds; round++) {
      for (const each of round % 2 === 1 ? unit : [...unit].reverse()) {
        // Rounds alternate server and baseline, so that a burst of other work on the machine hits both.
        const measured = await measure(each, server, serverTarget, options, halfRate && round === options.rounds);
        serverRounds.get(each.id)!.push(measured.max);
        if (!halves.has(each.id) && measured.half) halves.set(each.id, measured.half);
        if (baseline)
          baselineRounds.get(each.id)!.push((await measure(each, baseline, baselineTarget, options, false)).max);
      }
    }
    for (const each of unit) {
      measuredRounds.set(each.id, serverRounds.get(each.id)!);
      results.push(resultOf(each, serverRounds.get(each.id)!, baselineRounds.get(each.id)!, halves.get(each.id)));
    }
  }
  return { ...mode, scenarios: results };

  function resultOf(
    scenario: Scenario,
    serverRounds: Measurement[],
    baselineRounds: Measurement[],
    half: ScenarioResult['halfRate'],
  ): ScenarioResult {
    const result: ScenarioResult = {
      id: scenario.id,
      title: scenario.title,
      kind: scenario.kind,
      server: median(serverRounds),
    };
    if (half) result.halfRate = half;
    if (baseline) {
      result.baseline = median(baselineRounds);
      result.ratio = result.server.rps / result.baseline.rps;
    }
    const failures = [result.server, result.baseline, result.halfRate].filter((m) => m && m.errors > 0);
    if (failures.length > 0) result.note = `errors: ${failures.map((m) => JSON.stringify(m!.statusCodes)).join(' / ')}`;
    log(
      `  ${scenario.title.padEnd(20)} ${result.server.rps.toFixed(0).padStart(6)} req/s` +
        (result.baseline
          ? `   baseline ${result.baseline.rps.toFixed(0).padStart(6)} req/s   ratio ${((result.ratio ?? 0) * 100).toFixed(0)}%`
          : '') +
        (result.halfRate
          ? `   p99 at ${result.halfRate.targetRps} req/s: ${result.halfRate.p99Ms.toFixed(1)} ms`
          : '') +
        (result.note ? `   (${result.note})` : ''),
    );
    return result;
  }
}

/** Warm-up, a run at full speed, and optionally a paced run at half that rate; RSS sampled throughout. */
async function measure(scenario: Scenario, service: Service, target: Target, options: Options, halfRate: boolean) {
  const stopSampling = sampleRss(service.pid);
  const poolSize = (durationS: number, expectedRps?: number) =>
    scenario.requestsPerPending
      ? poolFor(service, target, options, scenario.requestsPerPending, durationS, expectedRps)
      : Promise.resolve(undefined);
  const run = async (durationS: number, expectedRps?: number): Promise<Measurement> => {
    const amount = await poolSize(durationS, expectedRps);
    // After the pool top-up, which also runs on this server.
    const cpuBefore = cpuMsOf(service.pid);
    const result = await runLoad({
      url: service.url,
      requests: scenario.requests(target),
      connections: options.connections,
      durationS,
      amount,
    });
    return {
      ...result,
      cpuMsPerRequest: result.requests > 0 ? (cpuMsOf(service.pid) - cpuBefore) / result.requests : undefined,
    };
  };
  const warmup = options.warmupS > 0 ? await run(options.warmupS) : undefined;
  const max = await run(options.durationS, warmup && warmup.requests > 0 ? warmup.rps * 1.5 : undefined);
  let half: (Measurement & { targetRps: number }) | undefined;
  if (halfRate) {
    const targetRps = Math.max(1, Math.round(max.rps / 2));
    await poolSize(options.durationS, targetRps);
    half = {
      ...(await runPaced({
        url: service.url,
        requests: scenario.requests(target),
        rate: targetRps,
        durationS: options.durationS,
      })),
      targetRps,
    };
  }
  max.peakRssBytes = stopSampling();
  return { max, half };
}

/** A just-started server's RSS once start-up has settled: what it holds before the first request. */
async function idleRss(service: Service): Promise<number | undefined> {
  await new Promise((resolve) => setTimeout(resolve, 3000));
  return rssOf(service.pid);
}

/** The round with the median throughput (all of its figures, so they stay consistent). */
function median(rounds: Measurement[]): Measurement {
  const sorted = [...rounds].sort((a, b) => a.rps - b.rps);
  const middle = sorted[Math.floor((sorted.length - 1) / 2)]!;
  return rounds.length > 1
    ? { ...middle, rounds: rounds.map((r) => ({ rps: r.rps, cpuMsPerRequest: r.cpuMsPerRequest })) }
    : middle;
}

const createRequest = scenarios.find((s) => s.id === 'create-request')!;
// Until an action scenario's run has been measured, assume actions go this fast.
const FIRST_GUESS_RPS = 1500;

/**
 * The action scenarios need a fresh pending request per `perPending` HTTP requests: tops the target's pool up
 * through the API (unmeasured) when the coming run may need more, and returns the number of requests the run may send.
 */
async function poolFor(
  service: Service,
  target: Target,
  options: Options,
  perPending: number,
  durationS: number,
  expectedRps = FIRST_GUESS_RPS,
) {
  const { connections } = options;
  const needed = Math.ceil(((expectedRps * durationS) / perPending) * 1.3) + 2 * connections;
  if (target.pool.length < needed) {
    const topUp = await runLoad({
      url: service.url,
      requests: createRequest.requests(target),
      connections,
      durationS: 120,
      amount: Math.max(connections, needed - target.pool.length),
    });
    if (topUp.errors > 0) throw new Error(`creating pending requests failed: ${JSON.stringify(topUp.statusCodes)}`);
  }
  // Whole sets (e.g. confirm + validate pairs) on every connection, leaving a margin for the first request of each.
  return perPending * connections * Math.max(1, Math.floor((target.pool.length - connections) / connections));
}

const SLOW_RUN_ANSWERS = 20;
const SLOW_RUN_MAX_S = 120;

/** The scale mode (scale.ts): PostgreSQL when it answers, then PGlite, each empty and then large. */
async function scale(options: Options, chosen: Scenario[], pgVersion: string | undefined): Promise<ScaleResult[]> {
  const hooks: ScaleHooks = {
    log,
    startServer: (name, env) => startServer(name, env),
    resetPostgres: preparePostgres,
    createFixtures: (url) => createFixtures(url, ADMIN_TOKEN, runId),
    measure: async (scenario, service, target) => {
      const rounds: Measurement[] = [];
      for (let round = 1; round <= options.rounds; round++) {
        let measured = (await measure(scenario, service, target, options, false)).max;
        // A request slower than the run is not counted at all (0 req/s, no p99): measure those by a number of
        // answers instead, bounded in time, so that the table says how slow they are.
        if (measured.requests < SLOW_RUN_ANSWERS && !scenario.requestsPerPending) {
          const cpuBefore = cpuMsOf(service.pid);
          const slow = await runLoad({
            url: service.url,
            requests: scenario.requests(target),
            connections: options.connections,
            durationS: SLOW_RUN_MAX_S,
            amount: SLOW_RUN_ANSWERS,
          });
          measured = {
            ...slow,
            cpuMsPerRequest: slow.requests > 0 ? (cpuMsOf(service.pid) - cpuBefore) / slow.requests : undefined,
            note: `fewer than ${SLOW_RUN_ANSWERS} answers in ${options.durationS} s: measured over ${slow.requests} answers instead`,
          };
        }
        rounds.push(measured);
      }
      return median(rounds);
    },
    workDir: work,
  };
  const results: ScaleResult[] = [];
  if (pgVersion)
    results.push(await scalePostgres(options.postgresUrl, options.scaleShape ?? 'production', chosen, hooks));
  if (options.databases.includes('pglite'))
    results.push(await scalePglite(options.scaleShape ?? 'pglite', chosen, hooks));
  return results;
}

async function soak(options: Options): Promise<SoakPoint[]> {
  log(`\n== memory soak: ${options.soakRequests} requests on PostgreSQL, one process`);
  const server = await startServer('works-api (soak)', { DATABASE_URL: options.postgresUrl });
  try {
    const target: Target = { fixtures: await createFixtures(server.url, ADMIN_TOKEN, runId), pool: [] };
    // One of each scenario but the two that use up pending requests besides confirm + validate (create-request
    // makes one per cycle, before confirm, so the pool never runs dry), and mixed, which repeats the others.
    const requests = scenarios
      .filter((s) => !['early-validate', 'cancel', 'mixed'].includes(s.id))
      .flatMap((s) => s.requests(target));
    const points: SoakPoint[] = [];
    const step = Math.max(1000, Math.round(options.soakRequests / 10 / requests.length) * requests.length);
    for (let done = 0; done < options.soakRequests;) {
      const amount = Math.min(step, options.soakRequests - done);
      const stopSampling = sampleRssStats(server.pid);
      const result = await runLoad({
        url: server.url,
        requests,
        connections: options.connections,
        durationS: 600,
        amount,
      });
      const rss = stopSampling();
      done += result.requests;
      // One reading moves by tens of MB with the garbage collector's rhythm: the mean over the chunk is the level.
      const point = {
        requests: done,
        rssBytes: rss.mean ?? 0,
        peakRssBytes: rss.peak ?? 0,
        endRssBytes: rssOf(server.pid) ?? 0,
        rps: result.rps,
        errors: result.errors,
      };
      points.push(point);
      const mb = (bytes: number) => `${(bytes / 1048576).toFixed(0)} MB`;
      log(
        `  ${String(done).padStart(7)} requests  RSS mean ${mb(point.rssBytes)}, peak ${mb(point.peakRssBytes)}  ${result.rps.toFixed(0)} req/s  errors ${result.errors}`,
      );
      if (result.requests === 0) throw new Error('the soak made no progress');
    }
    return points;
  } finally {
    await server.stop();
  }
}

async function profile(options: Options, chosen: Scenario[]): Promise<Record<string, ProfileSummary>> {
  const dir = path.join(resultsDir, `profiles-${new Date().toISOString().replace(/[:.]/g, '-')}`);
  mkdirSync(dir, { recursive: true });
  log(
    `\n== CPU profiles of the server on PostgreSQL (one process per scenario) into ${path.relative(process.cwd(), dir)}`,
  );
  const setup = await startServer('works-api (fixtures)', { DATABASE_URL: options.postgresUrl });
  const summaries: Record<string, ProfileSummary> = {};
  try {
    const target: Target = { fixtures: await createFixtures(setup.url, ADMIN_TOKEN, runId), pool: [] };
    for (const scenario of chosen) {
      if (scenario.requestsPerPending)
        await poolFor(setup, target, options, scenario.requestsPerPending, options.durationS + options.warmupS);
      const name = `${scenario.id}.cpuprofile`;
      const server = await startServer(`works-api (profiling ${scenario.id})`, { DATABASE_URL: options.postgresUrl }, [
        '--cpu-prof',
        `--cpu-prof-dir=${dir}`,
        `--cpu-prof-name=${name}`,
      ]);
      let rps: number;
      try {
        rps = (await measure(scenario, server, target, options, false)).max.rps;
      } finally {
        await server.stop();
      }
      // Start-up (loading modules, compiling the spec's schemas) is not what the scenario costs.
      summaries[scenario.id] = summarizeProfile(path.join(dir, name), server.readyAfterMs);
      log(
        `\n${formatProfile(`${scenario.title} (${rps.toFixed(0)} req/s under the profiler)`, summaries[scenario.id]!)}`,
      );
    }
  } finally {
    await setup.stop();
  }
  log(
    `\nOpen a .cpuprofile in Chrome DevTools (Performance → Load profile) or https://www.speedscope.app for a flame graph.`,
  );
  return summaries;
}

async function hotParent(options: Options): Promise<HotParentRow[]> {
  log(`\n== writes into one parent against 16 parents, PostgreSQL, one process, ${options.durationS} s per run`);
  const server = await startServer('works-api (hot parent)', { DATABASE_URL: options.postgresUrl });
  try {
    return await hotParentComparison(server.url, ADMIN_TOKEN, runId, options, log);
  } finally {
    await server.stop();
  }
}

async function bulk(options: Options): Promise<BulkResult> {
  log(`\n== bulk send (issue 41), PostgreSQL, one process, ${options.durationS} s per run`);
  const server = await startServer('works-api (bulk)', { DATABASE_URL: options.postgresUrl });
  try {
    return await bulkComparison(server.url, ADMIN_TOKEN, runId, options.postgresUrl, options, log);
  } finally {
    await server.stop();
  }
}

async function countQueries(options: Options, chosen: Scenario[]) {
  log('\n== database statements per request (each a round trip), PostgreSQL');
  const server = await startServer('works-api (counting)', { DATABASE_URL: options.postgresUrl }, [], true);
  let baseline: Service | undefined;
  const rows: Array<{ scenario: string; server: number; baseline: number | null; serverStatements: string[] }> = [];
  try {
    const fixtures = await createFixtures(server.url, ADMIN_TOKEN, runId);
    baseline = await startService({
      name: 'baseline (counting)',
      script: baselineMain,
      env: { DATABASE_URL: options.postgresUrl },
      logFile: path.join(work, 'baseline-count.log'),
      countQueries: true,
    });
    const perRequest = async (
      service: Service,
      target: Target,
      scenario: Pick<Scenario, 'title' | 'requests' | 'requestsPerPending'>,
    ) => {
      const iterations = 20;
      const requests = scenario.requests(target);
      if (scenario.requestsPerPending)
        await poolFor(service, target, { ...options, connections: 1 }, scenario.requestsPerPending, 1, iterations * 2);
      await service.queries();
      const result = await runLoad({
        url: service.url,
        requests,
        connections: 1,
        durationS: 60,
        amount: iterations * requests.length,
      });
      if (result.errors > 0)
        throw new Error(`${scenario.title} on ${service.name}: ${JSON.stringify(result.statusCodes)}`);
      const { count, statements } = await service.queries();
      const per = count / result.requests;
      return { per, last: statements.slice(-Math.round(per * requests.length)) };
    };
    const serverTarget: Target = { fixtures, pool: [] };
    const baselineTarget: Target = { fixtures, pool: [] };
    for (const scenario of chosen) {
      const s = await perRequest(server, serverTarget, scenario);
      const b = await perRequest(baseline, baselineTarget, scenario);
      rows.push({ scenario: scenario.title, server: s.per, baseline: b.per, serverStatements: s.last });
      log(`\n  ${scenario.title}: server ${s.per.toFixed(2)} statements/request, baseline ${b.per.toFixed(2)}`);
      for (const statement of s.last) log(`    ${statement}`);
    }
    log('\n  every list and read (server only; full pages, so a statement per row would show):');
    const auditData = await createAuditData(server.url, fixtures);
    for (const read of auditReads(fixtures, auditData)) {
      const s = await perRequest(server, serverTarget, {
        title: read.title,
        requests: ({ fixtures: f }) => [
          { method: 'GET', path: read.path, headers: { Authorization: `Bearer ${f.apiKey}` } },
        ],
      });
      rows.push({ scenario: read.title, server: s.per, baseline: null, serverStatements: s.last });
      log(`\n  ${read.title}: ${s.per.toFixed(2)} statements/request`);
      for (const statement of s.last) log(`    ${statement}`);
    }
  } finally {
    await baseline?.stop();
    await server.stop();
  }
  return rows;
}

/**
 * A session cookie against a full API key (issue 40): the same requests on one server, in the same run, rounds
 * interleaved (key, session, key, session, ...), so that a burst of other work on the machine hits both.
 */
async function credentials(options: Options): Promise<CredentialRow[]> {
  log(`\n== credentials: a full API key and a session cookie, PostgreSQL (${redact(options.postgresUrl)})`);
  const server = await startServer('works-api (credentials)', { DATABASE_URL: options.postgresUrl, LOG_LEVEL: 'info' });
  const rows: CredentialRow[] = [];
  try {
    const fixtures = await createFixtures(server.url, ADMIN_TOKEN, runId);
    const cookie = await signInForBench(server.url, `bench-${runId}@example.com`, server.logFile);
    const target: Target = { fixtures, pool: [] };
    const rounds = Math.max(3, options.rounds);
    for (const pair of credentialPairs) {
      const kind = pair.id === 'get-tenant' ? 'read' : 'write';
      const withKey: Scenario = {
        id: pair.id as ScenarioId,
        title: pair.title,
        kind,
        requests: (t) => [pair.withKey(t.fixtures)],
      };
      const withSession: Scenario = {
        id: pair.id as ScenarioId,
        title: pair.title,
        kind,
        requests: (t) => [pair.withSession(t.fixtures, cookie)],
      };
      const keyRounds: Measurement[] = [];
      const sessionRounds: Measurement[] = [];
      for (let round = 1; round <= rounds; round++) {
        keyRounds.push((await measure(withKey, server, target, options, false)).max);
        sessionRounds.push((await measure(withSession, server, target, options, false)).max);
      }
      const errors = [...keyRounds, ...sessionRounds].filter((m) => m.errors > 0);
      if (errors.length > 0)
        throw new Error(`credentials ${pair.id}: errors ${JSON.stringify(errors[0]!.statusCodes)}`);
      const cpu = (measurements: Measurement[]) => {
        const values = measurements.map((m) => m.cpuMsPerRequest ?? NaN).sort((a, b) => a - b);
        return values[Math.floor((values.length - 1) / 2)]!;
      };
      const key = median(keyRounds);
      const session = median(sessionRounds);
      const row: CredentialRow = {
        id: pair.id,
        title: pair.title,
        key,
        session,
        cpuRatio: cpu(sessionRounds) / cpu(keyRounds),
      };
      rows.push(row);
      log(
        `  ${pair.title.padEnd(14)} key ${key.rps.toFixed(0)} req/s, ${cpu(keyRounds).toFixed(3)} CPU ms/req; ` +
          `session ${session.rps.toFixed(0)} req/s, ${cpu(sessionRounds).toFixed(3)} CPU ms/req; ` +
          `session/key CPU ${((row.cpuRatio ?? 0) * 100).toFixed(1)}%`,
      );
    }
  } finally {
    await server.stop();
  }
  return rows;
}

// ---------------------------------------------------------------------------------------------------------------
// Helpers

async function webhooks(options: Options, chosen: Scenario[]): Promise<WebhookScenarioResult[]> {
  log(
    `\n== webhooks: write scenarios without and with a subscribed endpoint, PostgreSQL (${redact(options.postgresUrl)})`,
  );
  const server = await startServer('works-api (webhooks)', {
    DATABASE_URL: options.postgresUrl,
    WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
  });
  try {
    const fixtures = await createFixtures(server.url, ADMIN_TOKEN, runId);
    const prepare = (scenario: Scenario, target: Target, durationS: number) =>
      scenario.requestsPerPending
        ? poolFor(server, target, options, scenario.requestsPerPending, durationS)
        : Promise.resolve(undefined);
    return await webhookComparison(server, fixtures, chosen, options, prepare, log);
  } finally {
    await server.stop();
  }
}

function startServer(
  name: string,
  env: Record<string, string>,
  nodeArgs: string[] = [],
  countQueries = false,
): Promise<Service> {
  return startService({
    name,
    script: serverMain,
    env: { ...env, ADMIN_TOKEN },
    nodeArgs: [...serverNodeArgs, ...nodeArgs],
    countQueries,
    logFile: path.join(work, `${name.replace(/[^a-z0-9]+/gi, '-')}.log`),
  });
}

/**
 * Empties the benchmark's own database (creating it when missing). Refuses a database whose name does not say
 * it is for benchmarks. Returns the server version, or undefined when no PostgreSQL answers.
 */
async function preparePostgres(url: string): Promise<string | undefined> {
  const database = decodeURIComponent(new URL(url).pathname.slice(1));
  if (!/bench/i.test(database)) {
    throw new Error(
      `BENCH_DATABASE_URL names the database "${database}": the benchmark empties it, so its name must contain "bench"`,
    );
  }
  const client = new Client({ connectionString: url });
  try {
    await client.connect();
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === '3D000') {
      const admin = new Client({ connectionString: Object.assign(new URL(url), { pathname: '/postgres' }).toString() });
      await admin.connect();
      await admin.query(`CREATE DATABASE "${database.replace(/"/g, '""')}"`);
      await admin.end();
      return preparePostgres(url);
    }
    log(
      `PostgreSQL at ${redact(url)} does not answer (${code ?? (error as Error).message}): skipping it. Set BENCH_DATABASE_URL to use another.`,
    );
    return undefined;
  }
  try {
    await client.query('DROP SCHEMA IF EXISTS public CASCADE');
    await client.query('CREATE SCHEMA public');
    const [row] = (await client.query<{ server_version: string }>('SHOW server_version')).rows;
    return row?.server_version;
  } finally {
    await client.end();
  }
}

/**
 * The database of the --against build: the benchmark's own, with "_against" after its name (so it also says
 * "bench"), emptied like it.
 */
async function againstDatabase(url: string): Promise<string> {
  const parsed = new URL(url);
  parsed.pathname = `${parsed.pathname}_against`;
  const against = parsed.toString();
  if (!(await preparePostgres(against))) throw new Error(`--against: PostgreSQL at ${redact(against)} does not answer`);
  return against;
}

function redact(url: string): string {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = '***';
  return parsed.toString();
}

function gitCommit(): string | undefined {
  try {
    const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: repoRoot, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], {
      cwd: repoRoot,
      encoding: 'utf8',
    }).trim();
    return dirty ? `${commit}+changes` : commit;
  } catch {
    return undefined;
  }
}

function machine(): Record<string, string | number> {
  return {
    cpu: os.cpus()[0]?.model.trim() ?? 'unknown',
    cpus: os.availableParallelism(),
    memory: `${(os.totalmem() / 1024 ** 3).toFixed(0)} GB`,
    os: `${os.type()} ${os.release()}`,
    node: process.versions.node,
    // Other work on the machine skews absolute numbers: quote the ratios.
    loadAverageAtStart: os.loadavg()[0]!.toFixed(2),
  };
}

main()
  .catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exitCode = 1;
  })
  .finally(() => rmSync(work, { recursive: true, force: true }));
