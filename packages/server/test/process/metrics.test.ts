import http from 'node:http';
import { histogram, parseScrape, total } from '../support/prometheus';
import { databaseEnv, removeDataDirs, type ServerProcess, spawnServer } from '../support/process';

/**
 * GET /metrics of the built server (`node dist/main.js`), on one process and under WEB_CONCURRENCY=2, where a
 * scrape reaches one worker and must report every worker's traffic.
 */
const TOKEN = 'process-metrics-token-0123456789';

/** One GET on a connection of its own, so that the cluster's round-robin spreads them over the workers. */
function get(
  port: number,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path, headers, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
  });
}

const scrape = async (port: number) => {
  const res = await get(port, '/metrics', { Authorization: `Bearer ${TOKEN}` });
  expect(res.status).toBe(200);
  return parseScrape(res.body);
};

const servers: ServerProcess[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.child.kill('SIGTERM');
    await server.exited;
  }
});
afterAll(() => removeDataDirs());

async function countsTraffic(env: Record<string, string>, workers: number): Promise<void> {
  // No dispatcher: on a shared PostgreSQL it would claim other test files' webhook deliveries.
  const server = await spawnServer({
    ...(await databaseEnv()),
    METRICS_TOKEN: TOKEN,
    WEBHOOK_DISPATCHER: 'false',
    ...env,
  });
  servers.push(server);
  const requests = 40;
  for (let i = 0; i < requests; i++) expect((await get(server.port, '/healthz')).status).toBe(200);
  for (let i = 0; i < requests / 2; i++) expect((await get(server.port, '/v1/me')).status).toBe(401);

  // Several scrapes, each landing on whichever worker the primary picks: every one reports every request.
  for (let i = 0; i < 4; i++) {
    const samples = await scrape(server.port);
    expect(total(samples, 'works_http_requests_total', { operation: 'healthz', method: 'GET', status: '200' })).toBe(
      requests,
    );
    expect(total(samples, 'works_http_requests_total', { operation: 'getMe', method: 'GET', status: '401' })).toBe(
      requests / 2,
    );
    const latency = histogram(samples, 'works_http_request_duration_seconds', { operation: 'healthz' });
    expect(latency.count).toBe(requests);
    expect(latency.sum).toBeGreaterThan(0);
    // One process's default metrics per worker, merged: the event loop lag is averaged, the heap added up.
    expect(total(samples, 'nodejs_heap_size_used_bytes')).toBeGreaterThan(0);
  }
  // And the traffic did go to `workers` different processes (their access lines carry their pid).
  await server.waitForLine((line) => line.msg === 'request' && line.route === '/metrics');
  const pids = new Set(server.lines.filter((line) => line.msg === 'request').map((line) => line.pid));
  expect(pids.size).toBe(workers);
}

it('counts every request of one process', () => countsTraffic({}, 1));

const onPostgres = process.env.DATABASE_URL ? it : it.skip;
onPostgres('counts every request of both workers under WEB_CONCURRENCY=2, whichever answers the scrape', () =>
  countsTraffic({ WEB_CONCURRENCY: '2' }, 2),
);
