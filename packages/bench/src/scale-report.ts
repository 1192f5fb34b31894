import type { ScaleResult } from './scale-types';

// The scale mode's table and its targets (the clean-up phase's table is in scale-cleanup.ts).

export const num = (value: number, digits = 0) =>
  value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
export const gb = (bytes?: number) =>
  bytes === undefined || !Number.isFinite(bytes) ? '?' : `${(bytes / 1024 ** 3).toFixed(2)} GB`;

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
