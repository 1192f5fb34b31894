import { createServer, connect, type AddressInfo, type Socket } from 'node:net';
import { createClient } from '@redis/client';
import { connectRedis, type RedisConnection } from '../../src/redis';
import { loadSpec } from '../../src/http/spec';
import { DevMailbox } from '../../src/mail/transport';
import { silentLogger } from '../../src/observability/logger';
import { startTelemetry } from '../../src/observability/telemetry';
import { freshEmail } from '../support/fixtures';
import { ADMIN_TOKEN, startTestServer, type TestServer, type TestUser } from '../support/server';

/** Rate limits per user (all their keys), per operator token and per client address for failed authentications: headers, 429 problem+json with Retry-After, exemptions, and a budget shared through Redis. */

describe('rate limit per API key (counted in the process)', () => {
  let server: TestServer;
  let ada: TestUser;

  beforeAll(async () => {
    server = await startTestServer({ rateLimitPerMinute: 3 });
    ada = await server.createUser('ada');
  });
  afterAll(() => server.close());

  it('announces the policy and what is left, then answers 429 problem+json with Retry-After', async () => {
    for (const left of [2, 1, 0]) {
      const res = await server.call('/v1/me', { apiKey: ada.apiKey });
      expect(res.status).toBe(200);
      expect(res.headers.get('ratelimit-policy')).toMatch(/^"3-in-1min"; q=3; w=60; pk=:[A-Za-z0-9+/=]+:$/);
      expect(res.headers.get('ratelimit')).toMatch(new RegExp(`^"3-in-1min"; r=${left}; t=([1-9]|[1-5][0-9]|60)$`));
    }
    const refused = await server.call('/v1/me', { apiKey: ada.apiKey });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(refused.headers.get('ratelimit')).toMatch(/^"3-in-1min"; r=0; t=\d+$/);
    expect(refused.headers.get('x-request-id')).toBeTruthy();
    expect(await refused.json()).toMatchObject({ status: 429, code: 'rate_limited', title: 'Too many requests' });
    // Refused before any work: a refused creation creates nothing.
    expect(
      (await server.call('/v1/tenants', { method: 'POST', apiKey: ada.apiKey, json: { name: 'Over budget' } })).status,
    ).toBe(429);
    expect(await server.database.prisma.tenant.count({ where: { name: 'Over budget' } })).toBe(0);
  });

  it('gives a user one budget for all their keys, the operator token one of its own, and never limits probes', async () => {
    const bob = await server.createUser('bob'); // the operator's second request
    const created = await server.call('/v1/api-keys', { method: 'POST', apiKey: bob.apiKey, json: { name: 'second' } });
    expect(created.status).toBe(201);
    const secondKey = (await created.json()).apiKey.secret;
    expect((await server.call('/v1/me', { apiKey: bob.apiKey })).status).toBe(200);
    expect((await server.call('/v1/me', { apiKey: secondKey })).status).toBe(200);
    // A new key is no new budget: both of Bob's keys are refused now.
    expect((await server.call('/v1/me', { apiKey: secondKey })).status).toBe(429);
    const refused = await server.call('/v1/me', { apiKey: bob.apiKey });
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({
      code: 'rate_limited',
      detail: expect.stringMatching(/^You have used/),
    });

    for (let i = 0; i < 5; i++) {
      const probe = await server.call('/healthz');
      expect(probe.status).toBe(200);
      expect(probe.headers.get('ratelimit')).toBeNull();
    }
    await server.createUser('carol'); // the operator's third request
    const operator = await server.call('/v1/admin/users', {
      method: 'POST',
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}` },
      json: { email: freshEmail('dave'), firstName: 'Dave', lastName: 'Tester' },
    });
    expect(operator.status).toBe(429);
    expect(await operator.json()).toMatchObject({ detail: expect.stringMatching(/^The operator token has used/) });
  });
});

describe('the RateLimit headers are where the contract says they are', () => {
  const { document } = loadSpec();
  const described = (name: string) =>
    String((document.components as { headers: Record<string, { description: string }> }).headers[name]!.description);

  it('per user, on what authenticated, never on a 401 or an address refused before authentication', async () => {
    expect(described('RateLimit')).toMatch(/per user/);
    expect(described('RateLimit')).not.toMatch(/per API key/);
    expect(described('RateLimit')).toMatch(/Absent on a `401`/);
    const server = await startTestServer({ rateLimitPerMinute: 100, rateLimitUnauthenticatedPerMinute: 1 });
    try {
      const ada = await server.createUser('ada');
      const known = await server.call('/v1/me', { apiKey: ada.apiKey });
      expect(known.headers.get('ratelimit')).toMatch(/^"100-in-1min"; r=99;/);
      const missing = await server.call('/v1/tenants/0193a1b2-7c3d-7e4f-8a9b-0c1d2e3f4a5b', { apiKey: ada.apiKey });
      expect(missing.status).toBe(404);
      expect(missing.headers.get('ratelimit-policy')).toMatch(/^"100-in-1min"; q=100; w=60; pk=/);
      const unknown = await server.call('/v1/me', { headers: { Authorization: 'Bearer wk_inventedkey_0123456789' } });
      expect(unknown.status).toBe(401);
      expect([unknown.headers.get('ratelimit'), unknown.headers.get('ratelimit-policy')]).toEqual([null, null]);
      const blocked = await server.call('/v1/me', { headers: { Authorization: 'Bearer wk_inventedkey_0123456789' } });
      expect(blocked.status).toBe(429);
      expect(blocked.headers.get('ratelimit')).toBeNull();
    } finally {
      await server.close();
    }
  });

  it('says so, and sends none, when rate limiting is off', async () => {
    expect(described('RateLimit')).toMatch(/`0` turns it off, and then no response carries it/);
    const server = await startTestServer({ rateLimitPerMinute: 0 });
    try {
      const ada = await server.createUser('ada');
      const res = await server.call('/v1/me', { apiKey: ada.apiKey });
      expect(res.status).toBe(200);
      expect([res.headers.get('ratelimit'), res.headers.get('ratelimit-policy')]).toEqual([null, null]);
    } finally {
      await server.close();
    }
  });
});

describe('failed authentications per client address (before authentication)', () => {
  const adminCall = (server: TestServer, headers: Record<string, string>) =>
    server.call('/v1/admin/users', {
      method: 'POST',
      headers: { Authorization: 'Bearer not-the-operator-token', ...headers },
      json: { email: freshEmail('eve'), firstName: 'Eve', lastName: 'Tester' },
    });

  it('refuses only failures: over budget, a valid key still passes, and an invented one costs no lookup', async () => {
    const server = await startTestServer({ rateLimitUnauthenticatedPerMinute: 3, ownDatabase: true });
    try {
      const ada = await server.createUser('ada');
      const me = (authorization?: string) =>
        server.call('/v1/me', authorization === undefined ? {} : { headers: { Authorization: authorization } });
      const unknownKey = `wk_abcdefghij_${'x'.repeat(43)}`; // well-formed: its prefix is looked up
      const statuses = [];
      for (const authorization of [undefined, 'Basic YWRhOnB3', 'Bearer wk_inventedkey_0123456789', unknownKey])
        statuses.push((await me(authorization)).status);
      expect(statuses).toEqual([401, 401, 401, 429]);
      const refused = await me(unknownKey); // counted and refused
      expect(refused.status).toBe(429);
      const retryAfter = Number(refused.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThan(0);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect(await refused.json()).toMatchObject({
        code: 'rate_limited',
        detail: expect.stringMatching(/^Too many requests from your address failed authentication \(3 a minute\)/),
      });
      // The same address, with a valid key: served, however many failures came from it (a NAT's other users).
      for (let i = 0; i < 3; i++) expect((await me(`Bearer ${ada.apiKey}`)).status).toBe(200);
      const second = await ada.client.POST('/api-keys', { body: { name: 'second' } });
      expect(second.response.status).toBe(201);
      expect((await me(`Bearer ${second.data!.apiKey.secret}`)).status).toBe(200);
      // A malformed key is refused from the prefix alone: with the database gone it is a 429, not a 503.
      await server.database.close();
      expect((await me('Bearer wk_inventedkey_x')).status).toBe(429);
      expect((await me()).status).toBe(429);
    } finally {
      await server.close();
    }
  });

  it('counts /metrics and /dev/mailbox toward the same budget; over it, the right tokens pass and only failures wait', async () => {
    const metricsToken = 'metrics-token-0123456789';
    const server = await startTestServer({
      rateLimitUnauthenticatedPerMinute: 2,
      telemetry: await startTelemetry(
        { metricsToken, tracing: { enabled: false, description: 'off', trustIncoming: false } },
        {},
      ),
      devMailbox: new DevMailbox(silentLogger()),
    });
    try {
      const ada = await server.createUser('ada');
      const metrics = (token: string) => server.call('/metrics', { headers: { Authorization: `Bearer ${token}` } });
      const mailbox = (key: string) => server.call('/dev/mailbox', { headers: { Authorization: `Bearer ${key}` } });
      expect((await metrics(metricsToken)).status).toBe(200);
      expect((await metrics('wrong-token')).status).toBe(401);
      expect((await mailbox('wrong-key')).status).toBe(401);
      const refused = await metrics('wrong-token');
      expect(refused.status).toBe(429);
      expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect((await mailbox('wrong-key')).status).toBe(429);
      expect((await server.call('/v1/me', { headers: { Authorization: 'Bearer wrong' } })).status).toBe(429);
      // Over budget, the right metrics token and the right operator token pass like a valid API key (anyone
      // sharing the operator's address could otherwise lock the operator out); every wrong one still waits.
      expect((await metrics(metricsToken)).status).toBe(200);
      expect((await mailbox(ada.apiKey)).status).toBe(200);
      const operator = (token: string) =>
        server.call('/v1/admin/users', {
          method: 'POST',
          headers: { Authorization: `Bearer ${token}` },
          json: { email: freshEmail('op'), firstName: 'Op', lastName: 'Tester' },
        });
      expect((await operator(ADMIN_TOKEN)).status).toBe(201);
      expect((await operator(`${ADMIN_TOKEN}x`)).status).toBe(429);
      expect((await metrics(`${metricsToken}x`)).status).toBe(429);
      expect((await metrics(metricsToken)).status).toBe(200);
      expect(server.bugs).toEqual([]);
    } finally {
      await server.close();
    }
  });

  it('warns once when requests carry X-Forwarded-For and TRUST_PROXY is not set', async () => {
    const warning = /requests carry X-Forwarded-For but TRUST_PROXY is not set/;
    const direct = await startTestServer();
    try {
      expect((await direct.call('/healthz')).status).toBe(200);
      expect(direct.logs.filter((line) => warning.test(String(line.msg)))).toEqual([]);
      for (let i = 0; i < 3; i++)
        await direct.call('/healthz', { headers: { 'X-Forwarded-For': `203.0.113.${i + 1}` } });
      expect(direct.logs.filter((line) => warning.test(String(line.msg)))).toEqual([
        expect.objectContaining({ level: 'warn', peer: expect.stringMatching(/127\.0\.0\.1/) }),
      ]);
    } finally {
      await direct.close();
    }
    const proxied = await startTestServer({ trustProxy: ['loopback'] });
    try {
      await proxied.call('/healthz', { headers: { 'X-Forwarded-For': '203.0.113.1' } });
      expect(proxied.logs.filter((line) => warning.test(String(line.msg)))).toEqual([]);
    } finally {
      await proxied.close();
    }
  });

  it('counts wrong operator tokens too, and reads X-Forwarded-For only through the proxies TRUST_PROXY names', async () => {
    const behindProxy = await startTestServer({ rateLimitUnauthenticatedPerMinute: 2, trustProxy: ['loopback'] });
    try {
      const client = { 'X-Forwarded-For': '203.0.113.7' };
      expect((await adminCall(behindProxy, client)).status).toBe(401);
      expect((await adminCall(behindProxy, client)).status).toBe(401);
      expect((await adminCall(behindProxy, client)).status).toBe(429);
      // Another client behind the same proxy has a budget of its own.
      expect((await adminCall(behindProxy, { 'X-Forwarded-For': '203.0.113.8' })).status).toBe(401);
    } finally {
      await behindProxy.close();
    }
    const direct = await startTestServer({ rateLimitUnauthenticatedPerMinute: 2 });
    try {
      // TRUST_PROXY off: a client cannot pick a fresh address per request.
      expect((await adminCall(direct, { 'X-Forwarded-For': '203.0.113.9' })).status).toBe(401);
      expect((await adminCall(direct, { 'X-Forwarded-For': '203.0.113.10' })).status).toBe(401);
      expect((await adminCall(direct, { 'X-Forwarded-For': '203.0.113.11' })).status).toBe(429);
    } finally {
      await direct.close();
    }
  });
});

const REDIS_URL = process.env.REDIS_URL;
const withRedis = REDIS_URL ? describe : describe.skip;
if (!REDIS_URL) {
  console.log(
    'rate-limit: the shared-budget tests need Redis and are skipped (set REDIS_URL, e.g. redis://127.0.0.1:6379)',
  );
}

withRedis('rate limit shared through Redis', () => {
  const prefix = `works-api-test-http:${process.pid}:${Date.now()}:rl:`;
  let redisA: RedisConnection;
  let redisB: RedisConnection;
  let one: TestServer;
  let two: TestServer;
  let ada: TestUser;

  beforeAll(async () => {
    // Two app instances, each with its own Redis connection, over one database: as two server processes would be.
    redisA = await connectRedis(REDIS_URL!, silentLogger());
    redisB = await connectRedis(REDIS_URL!, silentLogger());
    one = await startTestServer({ rateLimitPerMinute: 4, rateLimitStore: redisA.store(prefix) });
    two = await startTestServer({
      rateLimitPerMinute: 4,
      rateLimitStore: redisB.store(prefix),
      database: one.database,
      keepDatabase: true,
    });
    ada = await one.createUser('ada');
  });
  afterAll(async () => {
    await two?.close();
    await one?.close();
    await redisA?.close();
    await redisB?.close();
    const cleaner = createClient({ url: REDIS_URL });
    await cleaner.connect();
    const keys = await cleaner.keys(`${prefix}*`);
    if (keys.length > 0) await cleaner.del(keys);
    await cleaner.close();
  });

  it('spends one budget per key across instances, and both refuse once it is gone', async () => {
    const remaining: string[] = [];
    for (const server of [one, two, one, two]) {
      const res = await server.call('/v1/me', { apiKey: ada.apiKey });
      expect(res.status).toBe(200);
      remaining.push(/r=(\d+)/.exec(res.headers.get('ratelimit') ?? '')?.[1] ?? '?');
    }
    expect(remaining).toEqual(['3', '2', '1', '0']);
    for (const server of [one, two]) {
      const refused = await server.call('/v1/me', { apiKey: ada.apiKey });
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    }
  });
});

/** A TCP relay to Redis that the test can cut, as a Redis that goes away looks to its clients. */
async function cuttableRelay(url: string): Promise<{ url: string; cut(): Promise<void> }> {
  const target = new URL(url);
  const sockets = new Set<Socket>();
  const relay = createServer((client) => {
    const upstream = connect(Number(target.port || 6379), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  const { port } = relay.address() as AddressInfo;
  return {
    url: `redis://127.0.0.1:${port}${target.pathname}`,
    cut: async () => {
      const closed = new Promise((resolve) => relay.close(resolve));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}

withRedis('rate limits while Redis is down', () => {
  it('counts failed authentications in the process instead; the per-user budget lets requests pass', async () => {
    const prefix = `works-api-test-http:${process.pid}:${Date.now()}:down:`;
    const relay = await cuttableRelay(REDIS_URL!);
    const redis = await connectRedis(relay.url, silentLogger());
    const server = await startTestServer({
      rateLimitPerMinute: 2,
      rateLimitStore: redis.store(`${prefix}rl:`),
      rateLimitUnauthenticatedPerMinute: 2,
      rateLimitUnauthenticatedStore: redis.store(`${prefix}rl-unauth:`),
    });
    try {
      const ada = await server.createUser('ada');
      await relay.cut();
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++)
        statuses.push((await server.call('/v1/me', { headers: { Authorization: 'Bearer wrong' } })).status);
      // Not open: the process's own count refuses after the budget, as Redis would have.
      expect(statuses).toEqual([401, 401, 429, 429]);
      expect(
        server.logs.filter((line) => /this process counts them itself until it is back/.test(String(line.msg))),
      ).toHaveLength(1); // once, not per request
      // The per-user budget fails open: a valid key passes beyond it rather than every request failing.
      for (let i = 0; i < 3; i++) expect((await server.call('/v1/me', { apiKey: ada.apiKey })).status).toBe(200);
      expect(server.bugs).toEqual([]);
    } finally {
      await server.close();
      await redis.close();
    }
  });
});
