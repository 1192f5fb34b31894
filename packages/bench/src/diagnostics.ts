import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { createFixtures } from './fixtures';
import { runLoad } from './load';
import { measure, poolFor } from './measure';
import type { Options } from './options';
import { baselineMain, rssOf, sampleRssStats, type Service, startService } from './processes';
import { formatProfile, type ProfileSummary, summarizeProfile } from './profile';
import { auditReads, createAuditData } from './read-audit';
import type { SoakPoint } from './report';
import { ADMIN_TOKEN, log, resultsDir, runId, startServer, work } from './run-context';
import { type Scenario, scenarios, type Target } from './scenarios';

// The runs that look inside the server on PostgreSQL: its memory over many requests (--soak), CPU profiles
// (--profile), and the statements each request sends (--count-queries).

export async function soak(options: Options): Promise<SoakPoint[]> {
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

export async function profile(options: Options, chosen: Scenario[]): Promise<Record<string, ProfileSummary>> {
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

export async function countQueries(options: Options, chosen: Scenario[]) {
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
