import { cpSync, rmSync } from 'node:fs';
import path from 'node:path';
import { createFixtures, type Fixtures } from './fixtures';
import { idleRss, measure, median } from './measure';
import type { Options } from './options';
import { againstDatabase, redact } from './postgres-setup';
import { baselineMain, type Service, startService } from './processes';
import type { Measurement, ModeResult, ScenarioResult } from './report';
import { ADMIN_TOKEN, log, runId, serverNodeArgs, startServer, work } from './run-context';
import { restrictedPairs, type Scenario, type ScenarioId, type Target } from './scenarios';

// The default run: the server next to the baseline (or another build, --against), scenario by scenario, on
// PostgreSQL (one process, then two with --cluster) and on embedded PGlite.

export async function postgresModes(
  options: Options,
  chosen: Scenario[],
): Promise<[ModeResult, ModeResult | undefined]> {
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

export async function pgliteMode(options: Options, chosen: Scenario[]): Promise<ModeResult> {
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
  // A scenario the baseline does not implement still runs on another build of the server (--against).
  const skipsBaseline = (scenario: Scenario) => scenario.serverOnly === true && options.against === undefined;
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
    const baselineHalves = new Map<ScenarioId, ScenarioResult['baselineHalfRate']>();
    // A pair is compared at a few percent: both are run once first, unmeasured, so that neither is measured while
    // the process is still compiling the code the other one warmed.
    if (twin) for (const each of unit) await measure(each, server, serverTarget, options, false);
    for (let round = 1; round <= options.rounds; round++) {
      for (const each of round % 2 === 1 ? unit : [...unit].reverse()) {
        // Rounds alternate server and baseline, so that a burst of other work on the machine hits both.
        const measured = await measure(each, server, serverTarget, options, halfRate && round === options.rounds);
        serverRounds.get(each.id)!.push(measured.max);
        if (!halves.has(each.id) && measured.half) halves.set(each.id, measured.half);
        if (baseline && !skipsBaseline(each)) {
          // The baseline paced at the server's half rate too: what latency this machine gives that load.
          const half = measured.half && { rps: measured.half.targetRps };
          const baselineMeasured = await measure(each, baseline, baselineTarget, options, half ?? false);
          baselineRounds.get(each.id)!.push(baselineMeasured.max);
          if (baselineMeasured.half) baselineHalves.set(each.id, baselineMeasured.half);
        }
      }
    }
    for (const each of unit) {
      measuredRounds.set(each.id, serverRounds.get(each.id)!);
      results.push(
        resultOf(
          each,
          serverRounds.get(each.id)!,
          baselineRounds.get(each.id)!,
          halves.get(each.id),
          baselineHalves.get(each.id),
        ),
      );
    }
  }
  return { ...mode, scenarios: results };

  function resultOf(
    scenario: Scenario,
    serverRounds: Measurement[],
    baselineRounds: Measurement[],
    half: ScenarioResult['halfRate'],
    baselineHalf: ScenarioResult['baselineHalfRate'],
  ): ScenarioResult {
    const result: ScenarioResult = {
      id: scenario.id,
      title: scenario.title,
      kind: scenario.kind,
      server: median(serverRounds),
    };
    if (half) result.halfRate = half;
    if (baselineHalf) result.baselineHalfRate = baselineHalf;
    if (baseline && !skipsBaseline(scenario)) {
      result.baseline = median(baselineRounds);
      result.ratio = result.server.rps / result.baseline.rps;
    }
    const failures = [result.server, result.baseline, result.halfRate, result.baselineHalfRate].filter(
      (m) => m && m.errors > 0,
    );
    if (failures.length > 0) result.note = `errors: ${failures.map((m) => JSON.stringify(m!.statusCodes)).join(' / ')}`;
    log(
      `  ${scenario.title.padEnd(20)} ${result.server.rps.toFixed(0).padStart(6)} req/s` +
        (result.baseline
          ? `   baseline ${result.baseline.rps.toFixed(0).padStart(6)} req/s   ratio ${((result.ratio ?? 0) * 100).toFixed(0)}%`
          : '') +
        (result.halfRate
          ? `   p99 at ${result.halfRate.targetRps} req/s: ${result.halfRate.p99Ms.toFixed(1)} ms` +
            (result.baselineHalfRate ? ` (baseline ${result.baselineHalfRate.p99Ms.toFixed(1)} ms)` : '')
          : '') +
        (result.note ? `   (${result.note})` : ''),
    );
    return result;
  }
}
