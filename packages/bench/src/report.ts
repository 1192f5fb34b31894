import os from 'node:os';
import type { LoadResult } from './load';
import { restrictedPairs, type ScenarioId } from './scenarios';

export interface Measurement extends LoadResult {
  /** Highest resident memory of the process (tree) seen during the warm-up and the runs. */
  peakRssBytes?: number;
  /** CPU time the server (all its processes) spent per response during the run: steadier than req/s on a busy machine. */
  cpuMsPerRequest?: number;
  /** With --rounds: every round (the figures above are the median round's). */
  rounds?: Array<{ rps: number; cpuMsPerRequest?: number }>;
  /** How it was measured, when not the usual way. */
  note?: string;
}

export interface ScenarioResult {
  id: ScenarioId;
  title: string;
  kind: 'write' | 'read' | 'mixed';
  server: Measurement;
  baseline?: Measurement;
  /** server req/s ÷ baseline req/s. */
  ratio?: number;
  /** The server held at half its measured maximum. */
  halfRate?: Measurement & { targetRps: number };
  /** The baseline held at the same rate, in the same round: the latency this machine gives that load. */
  baselineHalfRate?: Measurement & { targetRps: number };
  /**
   * A restricted-key scenario measured in turn with its full-key partner (scenarios.ts, restrictedPairs): the median,
   * over the rounds, of its CPU per request ÷ the partner's in the same round.
   */
  cpuVsFullKey?: number;
  note?: string;
}

export interface ModeResult {
  id: 'postgres' | 'postgres-2-workers' | 'pglite';
  title: string;
  workers: number;
  /** RSS of the server a few seconds after start-up, before any request. */
  idleRssBytes?: number;
  scenarios: ScenarioResult[];
}

export interface SoakPoint {
  requests: number;
  /** Mean RSS over the chunk of requests that ended here. */
  rssBytes: number;
  peakRssBytes: number;
  /** RSS when the chunk ended. */
  endRssBytes: number;
  rps: number;
  errors: number;
}

export interface BenchReport {
  startedAt: string;
  commit?: string;
  machine: Record<string, string | number>;
  options: Record<string, unknown>;
  modes: ModeResult[];
  soak?: SoakPoint[];
  targets?: TargetCheck[];
}

export interface TargetCheck {
  target: string;
  value: string;
  met: boolean;
}

const mb = (bytes?: number) => (bytes === undefined ? '-' : `${(bytes / 1024 / 1024).toFixed(0)} MB`);
const num = (value: number | undefined, digits = 0) => (value === undefined ? '-' : value.toFixed(digits));

function table(rows: string[][], alignLeft = 1): string {
  const widths = rows[0]!.map((_, col) => Math.max(...rows.map((row) => (row[col] ?? '').length)));
  return rows
    .map((row) =>
      row.map((cell, col) => (col < alignLeft ? cell.padEnd(widths[col]!) : cell.padStart(widths[col]!))).join('  '),
    )
    .join('\n');
}

export function formatMode(mode: ModeResult): string {
  const hasBaseline = mode.scenarios.some((s) => s.baseline);
  const hasHalf = mode.scenarios.some((s) => s.halfRate);
  const header = ['scenario', 'req/s', 'p50 ms', 'p99 ms', 'errors', 'CPU ms/req', 'peak RSS'];
  if (hasBaseline) header.push('|', 'baseline req/s', 'p50 ms', 'p99 ms', 'errors', 'CPU ms/req', 'RSS', '|', 'ratio');
  if (hasHalf) header.push('|', 'half-max req/s', 'p99 ms', 'baseline p99 ms');
  const rows = [header];
  for (const s of mode.scenarios) {
    const row = [
      s.title,
      num(s.server.rps),
      num(s.server.p50Ms, 1),
      num(s.server.p99Ms, 1),
      String(s.server.errors),
      num(s.server.cpuMsPerRequest, 2),
      mb(s.server.peakRssBytes),
    ];
    if (hasBaseline) {
      const b = s.baseline;
      row.push(
        '|',
        num(b?.rps),
        num(b?.p50Ms, 1),
        num(b?.p99Ms, 1),
        b ? String(b.errors) : '-',
        num(b?.cpuMsPerRequest, 2),
        mb(b?.peakRssBytes),
      );
      row.push('|', s.ratio === undefined ? '-' : `${(s.ratio * 100).toFixed(0)}%`);
    }
    if (hasHalf) row.push('|', num(s.halfRate?.rps), num(s.halfRate?.p99Ms, 1), num(s.baselineHalfRate?.p99Ms, 1));
    rows.push(row);
  }
  const notes = mode.scenarios.filter((s) => s.note).map((s) => `  note (${s.title}): ${s.note}`);
  const idle =
    mode.idleRssBytes === undefined ? [] : [`  server RSS when idle after start-up: ${mb(mode.idleRssBytes)}`];
  return [`${mode.title}`, table(rows), ...idle, ...notes].join('\n');
}

export function formatCluster(single: ModeResult, double: ModeResult): string {
  // Cores the server kept busy: with one core left for the load generator and PostgreSQL, a second worker has
  // nothing to run on; this column says whether that was the limit.
  const cores = (m?: Measurement) =>
    m?.cpuMsPerRequest === undefined ? '-' : ((m.cpuMsPerRequest * m.rps) / 1000).toFixed(2);
  const rows = [['scenario', '1 worker req/s', 'cores busy', '2 workers req/s', 'cores busy', '2 ÷ 1']];
  for (const s of double.scenarios) {
    const one = single.scenarios.find((x) => x.id === s.id);
    rows.push([
      s.title,
      num(one?.server.rps),
      cores(one?.server),
      num(s.server.rps),
      cores(s.server),
      one ? `${(s.server.rps / one.server.rps).toFixed(2)}x` : '-',
    ]);
  }
  return [
    `PostgreSQL: 1 vs 2 server processes (WEB_CONCURRENCY); this machine has ${os.availableParallelism()} CPUs for everything`,
    table(rows),
  ].join('\n');
}

export function formatSoak(points: SoakPoint[]): string {
  const rows = [['requests', 'RSS (mean of chunk)', 'peak', 'at end', 'req/s', 'errors']];
  for (const p of points)
    rows.push([
      String(p.requests),
      mb(p.rssBytes),
      mb(p.peakRssBytes),
      mb(p.endRssBytes),
      num(p.rps),
      String(p.errors),
    ]);
  return ['Memory soak (PostgreSQL, one process, every scenario in turn)', table(rows)].join('\n');
}

/** The throughput and CPU targets, checked against what this run measured (missing measurements are left out). */
export function checkTargets(report: BenchReport): TargetCheck[] {
  const checks: TargetCheck[] = [];
  const throughput = (mode: ModeResult | undefined, minimum: number) => {
    for (const s of mode?.scenarios ?? []) {
      if (s.ratio === undefined) continue;
      checks.push({
        target: `${mode!.id === 'pglite' ? 'PGlite: ' : ''}${s.title}: at least ${minimum * 100}% of baseline throughput`,
        value: `${(s.ratio * 100).toFixed(0)}%`,
        met: s.ratio >= minimum,
      });
    }
  };
  const pg = report.modes.find((m) => m.id === 'postgres');
  throughput(pg, 0.5);
  throughput(
    report.modes.find((m) => m.id === 'pglite'),
    0.7,
  );
  for (const s of pg?.scenarios ?? []) {
    const cpu = s.server.cpuMsPerRequest;
    const baselineCpu = s.baseline?.cpuMsPerRequest;
    if (cpu !== undefined && baselineCpu !== undefined && baselineCpu > 0) {
      checks.push({
        target: `${s.title}: CPU per request at most 2x the baseline's`,
        value: `${(cpu / baselineCpu).toFixed(1)}x`,
        met: cpu <= 2 * baselineCpu,
      });
    }
    if (s.halfRate) {
      checks.push({
        target: `${s.title}: p99 under 20 ms at half the maximum (${s.halfRate.targetRps} req/s)`,
        value: `${s.halfRate.p99Ms.toFixed(1)} ms`,
        met: s.halfRate.p99Ms < 20 && s.halfRate.errors === 0,
      });
    }
  }
  // A restricted key against the full key, same run, same database: its checks cost at most 5% more CPU.
  for (const { full, restricted } of restrictedPairs) {
    const withFull = pg?.scenarios.find((s) => s.id === full)?.server.cpuMsPerRequest;
    const limited = pg?.scenarios.find((s) => s.id === restricted);
    const withRestricted = limited?.server.cpuMsPerRequest;
    // Round by round when the two were measured in turn; else the two medians.
    const factor =
      limited?.cpuVsFullKey ??
      (withFull !== undefined && withRestricted !== undefined && withFull > 0 ? withRestricted / withFull : undefined);
    if (factor === undefined) continue;
    checks.push({
      target: `${limited!.title}: CPU per request at most 5% over the full key's`,
      value: `${factor >= 1 ? '+' : ''}${((factor - 1) * 100).toFixed(1)}%`,
      met: factor <= 1.05,
    });
  }
  if (pg?.idleRssBytes !== undefined) {
    checks.push({
      target: 'RSS when idle after start-up under 120 MB',
      value: mb(pg.idleRssBytes),
      met: pg.idleRssBytes < 120 * 1024 * 1024,
    });
  }
  const two = report.modes.find((m) => m.id === 'postgres-2-workers')?.scenarios.find((s) => s.id === 'create-tenant');
  const one = pg?.scenarios.find((s) => s.id === 'create-tenant');
  if (two && one) {
    const factor = two.server.rps / one.server.rps;
    checks.push({
      target: '2 workers at least 1.6x 1 worker on create tenant',
      value: `${factor.toFixed(2)}x`,
      met: factor >= 1.6,
    });
  }
  const soak = report.soak;
  if (soak && soak.length > 0) {
    const last = soak.at(-1)!;
    const half = soak.find((p) => p.requests >= last.requests / 2)!;
    checks.push({
      target: `RSS under 200 MB after ${last.requests} requests (mean over the last chunk)`,
      value: mb(last.rssBytes),
      met: last.rssBytes < 200 * 1024 * 1024,
    });
    const growth = last.rssBytes / half.rssBytes - 1;
    checks.push({
      target: `RSS growth under 5% between ${half.requests} and ${last.requests} requests`,
      value: `${(growth * 100).toFixed(1)}%`,
      // Compared in bytes: growth computed as a ratio puts exactly 5% a rounding error away from 0.05.
      met: last.rssBytes < half.rssBytes * 1.05,
    });
  }
  return checks;
}

export function formatTargets(checks: TargetCheck[]): string {
  if (checks.length === 0) return '';
  const rows = [['target', 'measured', '']];
  for (const c of checks) rows.push([c.target, c.value, c.met ? 'met' : 'MISSED']);
  return ['Targets', table(rows)].join('\n');
}

/** Side by side with an earlier run: server throughput and ratio, per mode and scenario. */
export function formatComparison(before: BenchReport, after: BenchReport): string {
  const rows = [['mode', 'scenario', 'req/s before', 'req/s now', 'change', 'ratio before', 'ratio now']];
  for (const mode of after.modes) {
    const old = before.modes.find((m) => m.id === mode.id);
    for (const s of mode.scenarios) {
      const was = old?.scenarios.find((x) => x.id === s.id);
      if (!was) continue;
      const change = s.server.rps / was.server.rps - 1;
      const pct = (r?: number) => (r === undefined ? '-' : `${(r * 100).toFixed(0)}%`);
      rows.push([
        mode.id,
        s.title,
        num(was.server.rps),
        num(s.server.rps),
        `${change >= 0 ? '+' : ''}${(change * 100).toFixed(0)}%`,
        pct(was.ratio),
        pct(s.ratio),
      ]);
    }
  }
  return [`Compared with ${before.startedAt} (${before.commit ?? 'unknown commit'})`, table(rows, 2)].join('\n');
}
