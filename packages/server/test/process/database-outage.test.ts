import { type Database, openDatabase } from '@works-api/prisma';
import { isDatabaseOutage } from '@works-api/prisma';
import { startLoad } from '../support/load';
import { type OwnPostgres, ownPostgresUnavailable, startOwnPostgres } from '../support/own-postgres';
import { ADMIN_TOKEN, createUserAt } from '../support/server';
import { killAll, type ServerProcess, spawnServer } from '../support/process';

/**
 * PostgreSQL goes away under load and comes back, twice: a clean stop (`pg_ctl -m fast`: sessions are ended
 * with SQLSTATE 57P01) and a crash-like one (`-m immediate`: sockets just close). On a PostgreSQL of the test's
 * own (never the shared one). While it is away every API answer is 503 `service_unavailable` problem+json with
 * Retry-After (never a 500); the outage is logged once, not per request; the service recovers by itself; and it
 * still shuts down cleanly afterwards (no connection left checked out). This is the test that says whether
 * prisma/src/outage.ts still recognises an outage after an upgrade of Prisma, its adapters or pg.
 */
const unavailable = ownPostgresUnavailable();
if (unavailable) console.log(`database-outage: skipped: ${unavailable}`);
const withOwnPostgres = unavailable ? describe.skip : describe;

interface Outcome {
  phase: Phase;
  operation: string;
  status: number;
  contentType: string;
  retryAfter: string | null;
  code?: string;
}
type Phase = 'up' | 'down' | 'back';

withOwnPostgres('PostgreSQL unavailable, then back, under load', () => {
  let postgres: OwnPostgres;
  let server: ServerProcess;

  beforeAll(async () => {
    postgres = await startOwnPostgres();
    server = await spawnServer({ DATABASE_URL: postgres.url, ADMIN_TOKEN, RATE_LIMIT_PER_MINUTE: '0' });
  });
  afterAll(async () => {
    if (server) await killAll([server]);
    await postgres?.destroy();
  });

  it('answers 503 with Retry-After while it is away, logs each outage once, and recovers by itself', async () => {
    const headers = { 'Content-Type': 'application/json' };
    const auth = { ...headers, Authorization: `Bearer ${(await createUserAt(server.baseUrl, 'outage')).apiKey}` };
    const tenant = (
      (await await fetch(`${server.baseUrl}/v1/tenants`, {
        method: 'POST',
        headers: auth,
        body: '{"name":"Outage"}',
      }).then((r) => r.json())) as {
        tenant: { id: string };
      }
    ).tenant;
    const worksUrl = `${server.baseUrl}/v1/tenants/${tenant.id}/works`;
    const work = (
      (await (await fetch(worksUrl, { method: 'POST', headers: auth, body: '{"name":"W"}' })).json()) as {
        work: { id: string };
      }
    ).work;
    const requestsUrl = `${worksUrl}/${work.id}/requests`;
    const firstRequest = (await (
      await fetch(requestsUrl, {
        method: 'POST',
        headers: auth,
        body: '{"title":"R","recipient":{"email":"r@example.com"}}',
      })
    ).json()) as {
      request: { id: string };
    };

    let phase: Phase = 'up';
    const lastRequest = new Map<number, string>();
    // Every kind of database work: the key lookup, reads, single inserts, batch and interactive transactions.
    const operations: Array<[string, (worker: number, sequence: number) => Promise<Response>]> = [
      ['getMe', () => fetch(`${server.baseUrl}/v1/me`, { headers: auth })],
      [
        'createTenant',
        (w, s) =>
          fetch(`${server.baseUrl}/v1/tenants`, {
            method: 'POST',
            headers: { ...auth, 'Idempotency-Key': `t-${w}-${s}-${Date.now()}` },
            body: '{"name":"T"}',
          }),
      ],
      ['getTenant', () => fetch(`${server.baseUrl}/v1/tenants/${tenant.id}`, { headers: auth })],
      [
        'createRequest',
        async (worker) => {
          const res = await fetch(requestsUrl, {
            method: 'POST',
            headers: auth,
            body: '{"title":"R","recipient":{"email":"r@example.com"}}',
          });
          if (res.status === 201)
            lastRequest.set(worker, ((await res.clone().json()) as { request: { id: string } }).request.id);
          return res;
        },
      ],
      [
        'confirmRequest',
        (worker) =>
          fetch(`${requestsUrl}/${lastRequest.get(worker) ?? firstRequest.request.id}/confirm`, {
            method: 'PUT',
            headers: auth,
          }),
      ],
      ['listWorks', () => fetch(`${worksUrl}?limit=5`, { headers: auth })],
    ];
    const load = startLoad<Outcome>(
      6,
      async (worker, sequence) => {
        const [operation, send] = operations[(worker + sequence) % operations.length]!;
        const at = phase;
        const res = await send(worker, sequence);
        const contentType = res.headers.get('content-type') ?? '';
        const body = contentType.includes('json') ? ((await res.json()) as { code?: string }) : undefined;
        return {
          phase: at,
          operation,
          status: res.status,
          contentType,
          retryAfter: res.headers.get('retry-after'),
          code: body?.code,
        };
      },
      60_000,
    );

    const recoveries: number[] = [];
    const count = (predicate: (outcome: Outcome) => boolean) => (results: readonly Outcome[]) =>
      results.filter(predicate).length;
    try {
      for (const mode of ['fast', 'immediate'] as const) {
        const before = load.results.length;
        await load.until((results) => count((o) => o.status < 300)(results.slice(before)) >= 30);
        await postgres.stop(mode);
        phase = 'down';
        const downFrom = load.results.length;
        // Every operation met the outage at least once, from a request sent after the server had stopped.
        await load.until((results) =>
          operations.every(([name]) =>
            results.slice(downFrom).some((o) => o.phase === 'down' && o.operation === name && o.status === 503),
          ),
        );
        expect((await fetch(`${server.baseUrl}/readyz`)).status).toBe(503);
        await postgres.start();
        const backAt = performance.now();
        phase = 'back';
        const backFrom = load.results.length;
        await load.until((results) => results.slice(backFrom).some((o) => o.status < 300));
        recoveries.push(performance.now() - backAt);
        // Recovered: every operation succeeds again (a 409 from confirming a request twice counts as an answer).
        await load.until((results) =>
          operations.every(([name]) =>
            results.slice(backFrom).some((o) => o.phase === 'back' && o.operation === name && o.status < 500),
          ),
        );
        await server.waitForLine(
          (line) =>
            line.msg === 'database reachable again' &&
            server.lines.filter((l) => l.msg === 'database reachable again').length === (mode === 'fast' ? 1 : 2),
        );
        phase = 'up';
      }
    } finally {
      await load.stop();
    }
    expect((await fetch(`${server.baseUrl}/readyz`)).status).toBe(200);

    const outcomes = load.results;
    // A 500 is a bug, logged with the error: show it, since it is an error outage.ts did not recognise.
    expect(server.lines.filter((line) => line.msg === 'internal error').map((line) => line.err)).toEqual([]);
    const serverErrors = outcomes.filter((o) => o.status >= 500);
    expect(serverErrors.length).toBeGreaterThan(0);
    // Never a 500: every server-side error is the outage, told as such.
    for (const outcome of serverErrors) {
      expect(outcome).toMatchObject({ status: 503, code: 'service_unavailable', retryAfter: '5' });
      expect(outcome.contentType).toMatch(/^application\/problem\+json/);
    }
    // Nothing but an outage stops a request here: 2xx, 409 (confirming twice) or the outage's 503.
    expect(
      new Set(outcomes.map((o) => o.status).filter((status) => status >= 300 && status !== 409 && status !== 503)),
    ).toEqual(new Set());

    const messages = server.lines.map((line) => String(line.msg));
    expect(messages.filter((msg) => msg.startsWith('database unreachable'))).toHaveLength(2);
    expect(messages.filter((msg) => msg === 'database reachable again')).toHaveLength(2);
    expect(messages.filter((msg) => msg === 'internal error')).toEqual([]);
    expect(
      server.lines
        .filter((line) => line.level === 'error' || line.level === 'fatal')
        .map((line) => (line.msg?.startsWith('database unreachable') ? line.msg : line)),
    ).toEqual([expect.stringMatching(/^database unreachable/), expect.stringMatching(/^database unreachable/)]);
    console.log(
      `database-outage: ${outcomes.length} requests, ${serverErrors.length} answered 503 during two outages, ` +
        `${outcomes.filter((o) => o.phase === 'back' && o.status < 300).length} succeeded after them; first success ` +
        `${recoveries.map((ms) => `${Math.round(ms)} ms`).join(' and ')} after PostgreSQL accepted connections again`,
    );

    // No connection was left checked out by the outage: the pool closes and the process exits 0.
    server.child.kill('SIGTERM');
    expect(await server.exited).toEqual({ code: 0, signal: null });
  }, 90_000);

  it('gives back the connections of interactive transactions the outage cut, so the pool neither fills up nor hangs', async () => {
    // More transactions in flight than the pool has connections (10), each holding its connection when the
    // server goes away. @prisma/adapter-pg 6.19 never gave such a connection back: the service hung for good.
    const database: Database = await openDatabase({ kind: 'postgres', url: postgres.url });
    try {
      await database.ping();
      const inFlight = Array.from({ length: 14 }, () =>
        database.prisma
          .$transaction(async (tx) => tx.$queryRaw`SELECT pg_sleep(30)`)
          .then(
            () => 'finished',
            (error: unknown) => (isDatabaseOutage(error) ? 'outage' : error),
          ),
      );
      // The first ten hold a connection each (the rest wait for one) once they are all running in the server.
      await database.prisma.$queryRaw`SELECT 1`.catch(() => undefined);
      const running = () =>
        new Promise<number>((resolve) => {
          void import('pg').then(async ({ Client }) => {
            const probe = new Client({ connectionString: postgres.url });
            await probe.connect();
            const { rows } = await probe.query<{ n: number }>(
              "SELECT count(*)::int AS n FROM pg_stat_activity WHERE query LIKE 'SELECT pg_sleep%'",
            );
            await probe.end();
            resolve(rows[0]!.n);
          });
        });
      while ((await running()) < 10) await new Promise((resolve) => setImmediate(resolve));
      await postgres.stop('fast');
      expect(new Set(await Promise.all(inFlight))).toEqual(new Set(['outage']));
      await postgres.start();
      expect(await database.prisma.user.count()).toBeGreaterThanOrEqual(0);
      await Promise.all(Array.from({ length: 12 }, () => database.prisma.$transaction(async (tx) => tx.user.count())));
    } finally {
      await database.close();
    }
  });
});
