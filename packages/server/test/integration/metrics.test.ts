import { startTelemetry, type Telemetry } from '../../src/observability/telemetry';
import { createRequest, createTenant, createWork, subscribe } from '../support/fixtures';
import { has, histogram, parseScrape, type Sample, total } from '../support/prometheus';
import { type Receiver, startReceiver } from '../support/receiver';
import { startTestServer, type TestServer, type TestUser } from '../support/server';

/**
 * GET /metrics: who may scrape it, and that what it reports matches traffic the test sends (counts exact,
 * histograms consistent). The same checks across two server processes are in test/process/metrics.test.ts.
 */
const TOKEN = 'metrics-token-for-tests-0123456789';
const onPglite = !process.env.DATABASE_URL;

let server: TestServer;
let telemetry: Telemetry;
let ada: TestUser;
const tenants: string[] = [];

beforeAll(async () => {
  telemetry = await startTelemetry(
    { metricsToken: TOKEN, tracing: { enabled: false, description: 'off', trustIncoming: false } },
    {},
    { queueGaugesMaxAgeMs: 0 },
  );
  // Deliveries are sent only when the test says (runOnce), and only this file's (a shared PostgreSQL has others').
  server = await startTestServer({ telemetry, webhooks: { manual: true, onlyTenants: () => tenants } });
  ada = await server.createUser('ada');
});
afterAll(() => server.close());

async function scrape(target = server, token = TOKEN): Promise<Sample[]> {
  const res = await target.call('/metrics', { headers: { Authorization: `Bearer ${token}` } });
  expect(res.status).toBe(200);
  return parseScrape(await res.text());
}

describe('access', () => {
  it('answers 401 without the token or with another one, and the Prometheus text format with it', async () => {
    for (const headers of [{}, { Authorization: 'Bearer not-the-token-0123456789' }, { Authorization: TOKEN }]) {
      const res = await server.call('/metrics', { headers });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    }
    const res = await server.call('/metrics', { headers: { Authorization: `Bearer ${TOKEN}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    const samples = parseScrape(await res.text());
    // The default process metrics are there too.
    expect(has(samples, 'process_cpu_user_seconds_total')).toBe(true);
    expect(has(samples, 'nodejs_eventloop_lag_seconds')).toBe(true);
  });

  it('is not there at all without METRICS_TOKEN, and never under /v1', async () => {
    const plain = await startTestServer();
    try {
      expect((await plain.call('/metrics', { headers: { Authorization: `Bearer ${TOKEN}` } })).status).toBe(404);
    } finally {
      await plain.close();
    }
    const res = await server.call('/v1/metrics', { apiKey: ada.apiKey });
    expect(res.status).toBe(404);
  });
});

describe('HTTP', () => {
  it('counts known traffic exactly, by operationId, method and status, with a consistent latency histogram', async () => {
    const before = await scrape();
    const started = performance.now();
    for (let i = 0; i < 5; i++) expect((await server.call('/v1/me', { apiKey: ada.apiKey })).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await server.call('/v1/me')).status).toBe(401);
    for (let i = 0; i < 2; i++) await createTenant(ada, `Counted ${i}`);
    const tenant = await createTenant(ada, 'Ids Are Not Labels');
    expect((await server.call(`/v1/tenants/${tenant.id}`, { apiKey: ada.apiKey })).status).toBe(200);
    expect((await server.call(`/v1/no/such/${tenant.id}`, { apiKey: ada.apiKey })).status).toBe(404);
    for (let i = 0; i < 2; i++) expect((await server.call('/healthz')).status).toBe(200);
    const elapsedSeconds = (performance.now() - started) / 1000;
    const after = await scrape();

    const added = (labels: Record<string, string>) =>
      total(after, 'works_http_requests_total', labels) - total(before, 'works_http_requests_total', labels);
    expect(added({ operation: 'getMe', method: 'GET', status: '200' })).toBe(5);
    expect(added({ operation: 'getMe', method: 'GET', status: '401' })).toBe(3);
    expect(added({ operation: 'createTenant', method: 'POST', status: '201' })).toBe(3);
    expect(added({ operation: 'getTenant', method: 'GET', status: '200' })).toBe(1);
    expect(added({ operation: 'unmatched', method: 'GET', status: '404' })).toBe(1);
    expect(added({ operation: 'healthz', method: 'GET', status: '200' })).toBe(2);
    // The scrape before this one, and nothing else.
    expect(added({ operation: 'metrics' })).toBe(1);
    expect(added({})).toBe(5 + 3 + 3 + 1 + 1 + 2 + 1);
    // No label holds a raw path or an id.
    const labelValues = after.flatMap((sample) => Object.values(sample.labels));
    expect(labelValues.some((value) => value.includes(tenant.id) || value.includes('/'))).toBe(false);

    const latency = (operation: string) => {
      const now = histogram(after, 'works_http_request_duration_seconds', { operation });
      const then = histogram(before, 'works_http_request_duration_seconds', { operation });
      return { count: now.count - then.count, sum: now.sum - then.sum };
    };
    const getMe = latency('getMe');
    expect(getMe.count).toBe(8);
    const createTenantLatency = latency('createTenant');
    expect(createTenantLatency.count).toBe(3);
    // Requests went one after another: their durations add up to less than the time it all took.
    expect(getMe.sum).toBeGreaterThan(0);
    expect(getMe.sum + createTenantLatency.sum).toBeLessThan(elapsedSeconds);
  });

  it('counts the requests in flight: during a scrape, the scrape itself', async () => {
    const samples = await scrape();
    expect(total(samples, 'works_http_requests_in_flight')).toBe(1);
  });

  it('counts idempotent replays', async () => {
    const before = total(await scrape(), 'works_idempotency_replays_total');
    const key = `metrics-${Date.now()}`;
    const post = () =>
      server.call('/v1/tenants', {
        method: 'POST',
        apiKey: ada.apiKey,
        headers: { 'Idempotency-Key': key },
        json: { name: 'Replayed Inc' },
      });
    const first = await post();
    const second = await post();
    expect([first.status, second.status]).toEqual([201, 201]);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(total(await scrape(), 'works_idempotency_replays_total') - before).toBe(1);
  });

  it('counts rate-limit rejections', async () => {
    const limited = await startTestServer({
      rateLimitPerMinute: 2,
      telemetry: await startTelemetry(
        { metricsToken: TOKEN, tracing: { enabled: false, description: 'off', trustIncoming: false } },
        {},
      ),
    });
    try {
      const user = await limited.createUser('limited');
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) statuses.push((await limited.call('/v1/me', { apiKey: user.apiKey })).status);
      expect(statuses).toEqual([200, 200, 429, 429, 429]);
      const samples = await scrape(limited);
      expect(total(samples, 'works_rate_limit_rejections_total')).toBe(3);
      expect(total(samples, 'works_http_requests_total', { operation: 'getMe', status: '429' })).toBe(3);
    } finally {
      await limited.close();
    }
  });
});

describe('database and webhooks', () => {
  let ok200: Receiver;
  let fails500: Receiver;
  beforeAll(async () => {
    ok200 = await startReceiver();
    fails500 = await startReceiver((_received, _index, res) => {
      res.statusCode = 500;
      res.end('no');
    });
  });
  afterAll(async () => {
    await ok200.close();
    await fails500.close();
  });

  it('reports the pool on PostgreSQL (none on PGlite) and no outage', async () => {
    const samples = await scrape();
    expect(total(samples, 'works_db_outage')).toBe(0);
    if (onPglite) {
      expect(has(samples, 'works_db_pool_connections')).toBe(false);
      return;
    }
    expect(total(samples, 'works_db_pool_max_connections')).toBe(10);
    const open = total(samples, 'works_db_pool_connections');
    expect(open).toBeGreaterThanOrEqual(1);
    expect(total(samples, 'works_db_pool_idle_connections')).toBeLessThanOrEqual(open);
    expect(total(samples, 'works_db_pool_waiting_requests')).toBe(0);
  });

  it('reports the outbox, the attempts by outcome and the lag to the first attempt', async () => {
    const tenant = await createTenant(ada, 'Hooked Inc');
    tenants.push(tenant.id);
    await subscribe(ada, tenant.id, ok200.url);
    await subscribe(ada, tenant.id, fails500.url);
    await subscribe(ada, tenant.id, 'http://127.0.0.1:9/nobody-listens');
    const work = await createWork(ada, tenant.id);
    await server.dispatcher!.runOnce(); // anything queued before this test is out of the way

    const before = await scrape();
    const written = Date.now();
    await createRequest(ada, tenant.id, work.id); // one event (request.created) for three endpoints
    const queued = await scrape();
    const depth = (samples: Sample[]) => total(samples, 'works_webhook_outbox_depth');
    if (onPglite) expect(depth(queued) - depth(before)).toBe(1);
    else expect(depth(queued)).toBeGreaterThanOrEqual(1);
    expect(total(queued, 'works_webhook_outbox_oldest_age_seconds')).toBeGreaterThanOrEqual(0);
    // The request's email is queued too (no mail sender runs here), counted by the mail outbox gauge.
    const mailDepth = (samples: Sample[]) => total(samples, 'works_mail_outbox_depth');
    if (onPglite) expect(mailDepth(queued) - mailDepth(before)).toBe(1);
    else expect(mailDepth(queued)).toBeGreaterThanOrEqual(1);

    expect(await server.dispatcher!.runOnce()).toBe(3);
    const after = await scrape();
    const attempts = (outcome: string) =>
      total(after, 'works_webhook_delivery_attempts_total', { outcome }) -
      total(before, 'works_webhook_delivery_attempts_total', { outcome });
    expect(attempts('delivered')).toBe(1);
    expect(attempts('rejected')).toBe(1);
    expect(attempts('unreachable')).toBe(1);
    expect(total(after, 'works_webhook_deliveries_failed_total')).toBe(0); // both are retried later
    if (onPglite) {
      expect(depth(after)).toBe(0);
      // The two failures wait for their retry: not due yet.
      expect(total(after, 'works_webhook_deliveries_due')).toBe(0);
      expect(total(after, 'works_webhook_outbox_oldest_age_seconds')).toBe(0);
    }
    const lagNow = histogram(after, 'works_webhook_first_attempt_lag_seconds');
    const lagThen = histogram(before, 'works_webhook_first_attempt_lag_seconds');
    expect(lagNow.count - lagThen.count).toBe(3);
    const lagSum = lagNow.sum - lagThen.sum;
    expect(lagSum).toBeGreaterThanOrEqual(0);
    expect(lagSum).toBeLessThanOrEqual((3 * (Date.now() - written)) / 1000);
  });
});
