import { bulkComparison, type BulkResult } from './bulk';
import { type CredentialRow, credentialPairs, signInForBench } from './credentials';
import { createFixtures } from './fixtures';
import { hotParentComparison, type HotParentRow } from './hot-parent';
import { runLoad } from './load';
import { measure, median, poolFor } from './measure';
import type { Options } from './options';
import { preparePostgres, redact } from './postgres-setup';
import { cpuMsOf } from './processes';
import type { Measurement } from './report';
import { ADMIN_TOKEN, log, runId, startServer, work } from './run-context';
import { type ScaleHooks, scalePglite, scalePostgres, type ScaleResult } from './scale';
import { type Scenario, type ScenarioId, type Target } from './scenarios';
import { webhookComparison, type WebhookScenarioResult } from './webhooks';

// The runs that compare the server with itself, no baseline: empty against large data (--scale), one parent against
// many (--hot-parent), bulk against single sends (--bulk), a session against a key, no webhook against one.

const SLOW_RUN_ANSWERS = 20;
const SLOW_RUN_MAX_S = 120;

/** The scale mode (scale.ts): PostgreSQL when it answers, then PGlite, each empty and then large. */
export async function scale(
  options: Options,
  chosen: Scenario[],
  pgVersion: string | undefined,
): Promise<ScaleResult[]> {
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

export async function hotParent(options: Options): Promise<HotParentRow[]> {
  log(`\n== writes into one parent against 16 parents, PostgreSQL, one process, ${options.durationS} s per run`);
  const server = await startServer('works-api (hot parent)', { DATABASE_URL: options.postgresUrl });
  try {
    return await hotParentComparison(server.url, ADMIN_TOKEN, runId, options, log);
  } finally {
    await server.stop();
  }
}

export async function bulk(options: Options): Promise<BulkResult> {
  log(`\n== bulk send (issue 41), PostgreSQL, one process, ${options.durationS} s per run`);
  const server = await startServer('works-api (bulk)', { DATABASE_URL: options.postgresUrl });
  try {
    return await bulkComparison(server.url, ADMIN_TOKEN, runId, options.postgresUrl, options, log);
  } finally {
    await server.stop();
  }
}

/**
 * A session cookie against a full API key (issue 40): the same requests on one server, in the same run, rounds
 * interleaved (key, session, key, session, ...), so that a burst of other work on the machine hits both.
 */
export async function credentials(options: Options): Promise<CredentialRow[]> {
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

export async function webhooks(options: Options, chosen: Scenario[]): Promise<WebhookScenarioResult[]> {
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
