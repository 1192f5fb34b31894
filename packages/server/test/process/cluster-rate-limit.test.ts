import http from 'node:http';
import { randomBytes } from 'node:crypto';
import { eventually } from '../support/load';
import { parseScrape, total } from '../support/prometheus';
import { ADMIN_TOKEN } from '../support/server';
import { databaseEnv, type ServerProcess, spawnServer } from '../support/process';

/**
 * WEB_CONCURRENCY=2 without REDIS_URL: the counters live in the cluster's primary (http/cluster-rate-limit.ts), so
 * each budget is admitted once for the cluster, not once per worker. Every request goes over a connection of its
 * own, so the primary's round-robin spreads them over both workers; their access lines (with their pid) show that
 * both answered. Only with PostgreSQL: an embedded PGlite keeps the server to one process.
 */
const PER_MINUTE = 6;
const UNAUTHENTICATED_PER_MINUTE = 5;
/** The recipient link budget is fixed (RECIPIENT_RATE_LIMITS): 30 a minute per link. */
const PER_LINK = 30;
const METRICS_TOKEN = 'cluster-rate-limit-metrics-token-0123';

function request(
  port: number,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string,
  agent: http.Agent | false = false,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path, headers, agent }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const onPostgres = process.env.DATABASE_URL ? describe : describe.skip;
if (!process.env.DATABASE_URL) {
  console.log('cluster-rate-limit: WEB_CONCURRENCY needs PostgreSQL; skipped (set DATABASE_URL)');
}

onPostgres('rate limits under WEB_CONCURRENCY=2 without Redis', () => {
  let server: ServerProcess;
  /** A key of a user whose budget the second test spends. */
  let apiKey: string | undefined;

  beforeAll(async () => {
    server = await spawnServer({
      ...(await databaseEnv()),
      WEB_CONCURRENCY: '2',
      ADMIN_TOKEN,
      RATE_LIMIT_PER_MINUTE: String(PER_MINUTE),
      RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE: String(UNAUTHENTICATED_PER_MINUTE),
      // No dispatcher: on a shared PostgreSQL it would claim other test files' webhook deliveries.
      WEBHOOK_DISPATCHER: 'false',
      METRICS_TOKEN,
    });
    // Both workers listen before the first request (the first one's line resolves spawnServer).
    await eventually(
      () =>
        expect(new Set(server.lines.filter((line) => typeof line.url === 'string').map((line) => line.pid)).size).toBe(
          2,
        ),
      { timeoutMs: 20_000 },
    );
  });
  afterAll(async () => {
    server.child.kill('SIGCONT');
    server.child.kill('SIGTERM');
    await server.exited;
  });

  /** The pids of the workers whose access lines match. */
  const answeredBy = (route: string, status: number, count: number) =>
    eventually(() => {
      const lines = accessLines(route, status);
      expect(lines.length).toBeGreaterThanOrEqual(count);
      return new Set(lines.map((line) => line.pid));
    });
  const accessLines = (route: string, status: number) =>
    server.lines.filter((line) => line.msg === 'request' && line.route === route && line.status === status);

  it('says where it counts', () => {
    const starting = server.lines.filter((line) => line.msg === 'works-api starting');
    expect(starting.length).toBeGreaterThanOrEqual(1);
    for (const line of starting)
      expect(line.config).toMatchObject({ rateLimit: expect.stringContaining("in the cluster's primary") });
  });

  it("admits the operator token's and a user's budget exactly once for the cluster", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < PER_MINUTE * 3; i++) {
      const res = await request(
        server.port,
        'POST',
        '/v1/admin/users',
        { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
        JSON.stringify({ email: `cluster-rl-${Date.now()}-${i}@example.com`, firstName: 'C', lastName: 'R' }),
      );
      statuses.push(res.status);
      if (res.status === 201) apiKey ??= (JSON.parse(res.body) as { apiKey: { secret: string } }).apiKey.secret;
    }
    expect(statuses.filter((status) => status === 201)).toHaveLength(PER_MINUTE);
    expect(statuses.filter((status) => status === 429)).toHaveLength(PER_MINUTE * 2);
    expect((await answeredBy('/v1/admin/users', 201, PER_MINUTE)).size).toBe(2);

    const me: number[] = [];
    for (let i = 0; i < PER_MINUTE * 3; i++)
      me.push((await request(server.port, 'GET', '/v1/me', { Authorization: `Bearer ${apiKey!}` })).status);
    expect(me.filter((status) => status === 200)).toHaveLength(PER_MINUTE);
    expect(me.filter((status) => status === 429)).toHaveLength(PER_MINUTE * 2);
    expect((await answeredBy('/v1/me', 200, PER_MINUTE)).size).toBe(2);
    expect((await answeredBy('/v1/me', 429, PER_MINUTE * 2)).size).toBe(2);
  });

  it("admits a recipient link's budget exactly once for the cluster", async () => {
    const token = randomBytes(24).toString('base64url');
    const statuses: number[] = [];
    for (let i = 0; i < PER_LINK + 10; i++) statuses.push((await request(server.port, 'GET', `/r/${token}`)).status);
    expect(statuses.filter((status) => status !== 429)).toHaveLength(PER_LINK);
    expect(statuses.filter((status) => status === 429)).toHaveLength(10);
  });

  it('lets requests pass, logged and counted, while the primary does not answer (fail open)', async () => {
    // A connection kept alive to one worker: it keeps serving while the primary, which hands out new
    // connections, is stopped.
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const me = () => request(server.port, 'GET', '/v1/me', { Authorization: `Bearer ${apiKey!}` }, undefined, agent);
    try {
      expect((await me()).status).toBe(429); // the budget the second test spent
      server.child.kill('SIGSTOP');
      let stopped: { status: number; ms: number };
      try {
        const started = Date.now();
        const res = await me();
        stopped = { status: res.status, ms: Date.now() - started };
      } finally {
        server.child.kill('SIGCONT');
      }
      // Unlimited after the question's timeout (500 ms), rather than a 503 for every request.
      expect(stopped.status).toBe(200);
      expect(stopped.ms).toBeGreaterThanOrEqual(450);
      expect((await me()).status).toBe(429);
    } finally {
      agent.destroy();
    }
    const logged = await server.waitForLine(
      (line) => line.level === 'error' && /did not answer a rate-limit question/.test(JSON.stringify(line.err)),
    );
    expect(logged.msg).toContain('allowing request without rate-limiting');
    const scrape = await request(server.port, 'GET', '/metrics', { Authorization: `Bearer ${METRICS_TOKEN}` });
    expect(scrape.status).toBe(200);
    expect(total(parseScrape(scrape.body), 'works_rate_limit_store_failures_total', { store: 'cluster' })).toBe(1);
  });

  // Last: it blocks this address for a minute, and every test before this one calls from it.
  it("refuses an address's failed authentications after its budget, whichever worker counts them", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < UNAUTHENTICATED_PER_MINUTE * 3; i++)
      statuses.push((await request(server.port, 'GET', '/v1/tenants', { Authorization: 'Bearer wrong' })).status);
    const failed = statuses.filter((status) => status === 401).length;
    // Each failure is counted in the primary before it is answered (http/rate-limit.ts, as with Redis), so the
    // budget holds exactly across the workers. Counted per worker, this would be twice the budget.
    expect(failed).toBe(UNAUTHENTICATED_PER_MINUTE);
    expect(statuses.filter((status) => status === 429)).toHaveLength(UNAUTHENTICATED_PER_MINUTE * 3 - failed);
    expect((await answeredBy('/v1/tenants', 401, failed)).size).toBe(2);
  });
});
