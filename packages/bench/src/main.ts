import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pgliteMode, postgresModes } from './baseline-comparison';
import type { BulkResult } from './bulk';
import { type CredentialRow, formatCredentials } from './credentials';
import { countQueries, profile, soak } from './diagnostics';
import type { HotParentRow } from './hot-parent';
import { parseOptions } from './options';
import { preparePostgres, redact } from './postgres-setup';
import { repoRoot, serverMain } from './processes';
import type { ProfileSummary } from './profile';
import {
  type BenchReport,
  checkTargets,
  formatCluster,
  formatComparison,
  formatMode,
  formatSoak,
  formatTargets,
} from './report';
import { log, resultsDir, setServerNodeArgs, work } from './run-context';
import { formatDuringCleanup, formatScale, type ScaleResult, scaleTargets } from './scale';
import { scaleScenarios } from './scale-scenarios';
import { scenarios } from './scenarios';
import { bulk, credentials, hotParent, scale, webhooks } from './server-comparisons';
import { formatWebhooks, type WebhookScenarioResult } from './webhooks';

/**
 * `pnpm bench`: starts the built server (packages/server/dist/main.js) on loopback, creates its data through the
 * API, and drives each scenario with autocannon next to the baseline (src/baseline/server.ts) on the same data.
 * Prints a table with ratios to the baseline and writes everything to bench-results/<time>.json.
 */
async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  setServerNodeArgs(options.serverNodeArgs);
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
