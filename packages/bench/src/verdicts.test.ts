// The bench's own judgements: which targets a run met, how options are read, where profile time is attributed.
// Run with `pnpm --filter @works-api/bench test` (node:test, on the compiled output).
import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import { parseOptions } from './options';
import { packageOf } from './profile';
import { LARGE_DATASET_SHAPES } from '@works-api/prisma/seed';
import { formatScale, type ScaleResult, scaleTargets } from './scale';
import { scaleScenarios } from './scale-scenarios';
import { type BenchReport, checkTargets, type Measurement, type ModeResult, type ScenarioResult } from './report';

const MB = 1024 * 1024;

const measured = (rps: number, p99Ms = 5, errors = 0): Measurement => ({
  requests: rps * 6,
  durationS: 6,
  rps,
  p50Ms: 1,
  p99Ms,
  errors,
  statusCodes: {},
});

const scenario = (
  kind: 'write' | 'read',
  ratio: number,
  halfRate?: { p99Ms: number; errors?: number },
): ScenarioResult => ({
  id: kind === 'write' ? 'create-tenant' : 'get-tenant',
  title: kind === 'write' ? 'create tenant' : 'get tenant',
  kind,
  server: measured(ratio * 1000),
  baseline: measured(1000),
  ratio,
  ...(halfRate && { halfRate: { ...measured(500, halfRate.p99Ms, halfRate.errors ?? 0), targetRps: 500 } }),
});

const report = (parts: Partial<BenchReport>): BenchReport => ({ modes: [], ...parts }) as BenchReport;
const postgres = (...scenarios: ScenarioResult[]): ModeResult => ({
  id: 'postgres',
  title: 'PostgreSQL',
  workers: 1,
  scenarios,
});
const verdicts = (r: BenchReport) => checkTargets(r).map((check) => [check.target, check.met]);

describe('checkTargets', () => {
  it('needs 50% of the baseline for every scenario, at the bound and not just under it', () => {
    const at = verdicts(report({ modes: [postgres(scenario('write', 0.5), scenario('read', 0.5))] }));
    assert.deepEqual(at, [
      ['create tenant: at least 50% of baseline throughput', true],
      ['get tenant: at least 50% of baseline throughput', true],
    ]);
    const under = verdicts(report({ modes: [postgres(scenario('write', 0.499), scenario('read', 0.499))] }));
    assert.deepEqual(
      under.map(([, met]) => met),
      [false, false],
    );
  });

  it('needs 70% of the PGlite baseline on PGlite', () => {
    const pglite = (ratio: number): ModeResult => ({ ...postgres(scenario('read', ratio)), id: 'pglite' });
    assert.deepEqual(verdicts(report({ modes: [pglite(0.7)] })), [
      ['PGlite: get tenant: at least 70% of baseline throughput', true],
    ]);
    assert.equal(verdicts(report({ modes: [pglite(0.699)] }))[0]![1], false);
  });

  it('needs CPU per request at most twice the baseline', () => {
    const cpu = (serverMs: number) => {
      const s = scenario('write', 1);
      s.server.cpuMsPerRequest = serverMs;
      s.baseline!.cpuMsPerRequest = 0.5;
      return checkTargets(report({ modes: [postgres(s)] })).find((c) => c.target.includes('CPU'));
    };
    assert.deepEqual([cpu(1)?.met, cpu(1)?.value], [true, '2.0x']);
    assert.equal(cpu(1.01)?.met, false);
  });

  it('needs the idle server under 120 MB', () => {
    const idle = (rssMb: number) =>
      checkTargets(report({ modes: [{ ...postgres(), idleRssBytes: rssMb * MB }] })).find((c) =>
        c.target.includes('idle'),
      )?.met;
    assert.equal(idle(119.9), true);
    assert.equal(idle(120), false);
  });

  it('needs p99 under 20 ms at half rate, with no errors', () => {
    const met = (halfRate: { p99Ms: number; errors?: number }) =>
      checkTargets(report({ modes: [postgres(scenario('write', 1, halfRate))] })).find((c) => c.target.includes('p99'))
        ?.met;
    assert.equal(met({ p99Ms: 19.9 }), true);
    assert.equal(met({ p99Ms: 20 }), false);
    assert.equal(met({ p99Ms: 5, errors: 1 }), false);
  });

  it('needs 2 workers at 1.6 times 1 worker on create tenant', () => {
    const factor = (twoRps: number) => {
      const two: ModeResult = {
        id: 'postgres-2-workers',
        title: 'PostgreSQL, 2 processes',
        workers: 2,
        scenarios: [{ ...scenario('write', 1), server: measured(twoRps) }],
      };
      return checkTargets(report({ modes: [postgres(scenario('write', 1)), two] })).find((c) =>
        c.target.startsWith('2 workers'),
      );
    };
    assert.deepEqual([factor(1600)?.met, factor(1600)?.value], [true, '1.60x']);
    assert.equal(factor(1599)?.met, false);
  });

  it('judges a restricted key at most 5% more CPU per request than the full key, same run', () => {
    const withCpu = (id: string, title: string, cpuMsPerRequest: number): ScenarioResult => ({
      id: id as ScenarioResult['id'],
      title,
      kind: 'read',
      server: { ...measured(1000), cpuMsPerRequest },
    });
    const check = (restricted: number) =>
      checkTargets(
        report({
          modes: [
            postgres(
              withCpu('get-tenant', 'get tenant', 1),
              withCpu('get-tenant-restricted', 'get tenant, restricted key', restricted),
            ),
          ],
        }),
      ).find((c) => c.target.startsWith('get tenant, restricted key'));
    assert.deepEqual([check(1.05)?.met, check(1.05)?.value], [true, '+5.0%']);
    assert.deepEqual([check(0.98)?.met, check(0.98)?.value], [true, '-2.0%']);
    assert.equal(check(1.051)?.met, false);
  });

  it('judges the soak on the last chunk: under 200 MB, and under 5% above the chunk at half way', () => {
    const point = (requests: number, rssMb: number) => ({
      requests,
      rssBytes: rssMb * MB,
      peakRssBytes: rssMb * MB,
      endRssBytes: rssMb * MB,
      rps: 400,
      errors: 0,
    });
    const soak = (last: number) =>
      verdicts(report({ soak: [point(50_000, 180), point(75_000, 185), point(100_000, last)] }));
    assert.deepEqual(soak(188), [
      ['RSS under 200 MB after 100000 requests (mean over the last chunk)', true],
      ['RSS growth under 5% between 50000 and 100000 requests', true],
    ]);
    assert.deepEqual(
      soak(199.9).map(([, met]) => met),
      [true, false],
    );
    assert.deepEqual(
      soak(200).map(([, met]) => met),
      [false, false],
    );
    const fromHigher = (last: number) => verdicts(report({ soak: [point(50_000, 250), point(100_000, last)] }));
    assert.deepEqual(
      fromHigher(262.4).map(([, met]) => met),
      [false, true],
    );
    assert.deepEqual(
      fromHigher(262.5).map(([, met]) => met),
      [false, false],
    ); // exactly 5%
  });

  it('leaves out what the run did not measure', () => {
    assert.deepEqual(checkTargets(report({})), []);
  });
});

describe('parseOptions', () => {
  it("defaults to every scenario on both databases, with the 2-worker and half-rate runs and pnpm start's flags", () => {
    const options = parseOptions([]);
    assert.deepEqual(options.databases, ['postgres', 'pglite']);
    assert.equal(options.scenarios.length, 13);
    assert.deepEqual(options.serverNodeArgs, ['--max-semi-space-size=4']);
    assert.equal(options.cluster && options.halfRate, true);
    assert.equal(options.soakRequests, 100_000);
  });

  it('reads -- separated options and resolves --against from where pnpm was started', () => {
    const options = parseOptions([
      '--',
      '--only',
      'postgres',
      '--scenarios',
      'create-work,list-works',
      '--against',
      'x/main.js',
    ]);
    assert.deepEqual(options.databases, ['postgres']);
    assert.deepEqual(options.scenarios, ['create-work', 'list-works']);
    assert.equal(options.against, path.resolve(process.env.INIT_CWD ?? process.cwd(), 'x/main.js'));
    assert.deepEqual(options.againstEnv, {});
  });

  it('--against-env sets variables for the other build only, and needs --against', () => {
    const options = parseOptions(['--against', 'x/main.js', '--against-env', 'OTEL_TRACES_EXPORTER=otlp  A=b=c']);
    assert.deepEqual(options.againstEnv, { OTEL_TRACES_EXPORTER: 'otlp', A: 'b=c' });
    assert.throws(() => parseOptions(['--against-env', 'A=1']), /--against-env needs --against/);
    assert.throws(() => parseOptions(['--against', 'x', '--against-env', '1A=2']), /NAME=value pairs/);
  });

  it('refuses unknown scenarios, databases and numbers below their minimum', () => {
    assert.throws(() => parseOptions(['--scenarios', 'delete-everything']), /unknown scenario delete-everything/);
    assert.throws(() => parseOptions(['--only', 'mysql']), /--only takes postgres or pglite/);
    assert.throws(() => parseOptions(['--duration', '0']), /--duration must be a number of at least 1/);
    assert.throws(() => parseOptions(['--soak-requests', '999']), /--soak-requests must be a number of at least 1000/);
  });

  it('--scale adds its own scenarios and shorter runs; its scenarios and --shape need it', () => {
    const options = parseOptions(['--scale']);
    assert.equal(options.scale, true);
    assert.equal(options.scenarios.length, 13 + scaleScenarios.length);
    assert.ok(options.scenarios.includes('list-tenants') && options.scenarios.includes('deep-page'));
    assert.equal(options.durationS, 3);
    assert.equal(options.scaleShape, undefined);
    assert.equal(parseOptions(['--scale', '--shape', 'small', '--duration', '2']).durationS, 2);
    assert.throws(() => parseOptions(['--scenarios', 'list-tenants']), /scenario list-tenants runs only with --scale/);
    assert.throws(() => parseOptions(['--shape', 'small']), /--shape takes production, pglite or small, with --scale/);
    assert.throws(() => parseOptions(['--scale', '--shape', 'huge']), /--shape takes/);
  });
});

describe('scaleTargets', () => {
  const result = (ratio: number, p99Ms: number, errors = 0, id: ScaleResult['id'] = 'postgres'): ScaleResult => ({
    id,
    title: 'PostgreSQL',
    shapeName: 'small',
    shape: {} as ScaleResult['shape'],
    loadMs: 1,
    loadSteps: [],
    deepPosition: { empty: 5, large: 18_000 },
    scenarios: [
      {
        id: 'list-tenants',
        title: 'list 20 tenants',
        kind: 'read',
        empty: measured(1000),
        large: measured(1000 * ratio, p99Ms, errors),
        ratio,
      },
    ],
  });
  const verdicts = (r: ScaleResult) => scaleTargets(r).map((c) => c.met);

  it('holds the large data set to 80% of the empty throughput and a p99 under 50 ms, on PostgreSQL', () => {
    assert.deepEqual(verdicts(result(0.8, 49)), [true, true]);
    assert.deepEqual(verdicts(result(0.79, 50)), [false, false]);
    assert.deepEqual(verdicts(result(1, 10, 3)), [false, false]);
    assert.deepEqual(verdicts(result(0.1, 500, 0, 'pglite')), []);
  });

  it('prints the table as Markdown, with the ratio', () => {
    const table = formatScale({ ...result(0.5, 120), shape: LARGE_DATASET_SHAPES.small });
    assert.match(table, /\| list 20 tenants \| +1,000 \| +5 ms \| +500 \| +120 ms \| +0\.50 \|/);
    assert.match(table, /2,000 tenants of one user/);
  });
});

describe('packageOf', () => {
  it('attributes profile time to npm packages, node, V8 and our own code', () => {
    assert.equal(
      packageOf('file:///r/node_modules/.pnpm/x/node_modules/@prisma/client/runtime/client.js', 'f'),
      '@prisma/client',
    );
    assert.equal(packageOf('file:///r/node_modules/express/lib/router.js', 'f'), 'express');
    assert.equal(packageOf('node:net', 'f'), 'node internals');
    assert.equal(packageOf('', 'writev'), '(native / V8)');
    assert.equal(packageOf('', '(garbage collector)'), '(garbage collector)');
    assert.equal(packageOf('file:///r/packages/server/dist/app.js', 'f'), 'works-api');
    assert.equal(packageOf('file:///r/prisma/dist/client.js', 'f'), 'works-api');
    assert.equal(packageOf('file:///r/prisma/dist/generated/internal/class.js', 'f'), '@prisma/client (generated)');
  });
});
