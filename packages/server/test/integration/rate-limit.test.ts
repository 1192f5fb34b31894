import { createClient } from '@redis/client';
import { connectRedis, type RedisConnection } from '../../src/http/rate-limit';
import { loadSpec } from '../../src/http/spec';
import { silentLogger } from '../../src/observability/logger';
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

  it('refuses an address with 429 once it failed 3 times in a minute, valid key or not, without a lookup', async () => {
    const server = await startTestServer({ rateLimitUnauthenticatedPerMinute: 3 });
    try {
      const ada = await server.createUser('ada');
      expect((await server.call('/v1/me', { apiKey: ada.apiKey })).status).toBe(200);
      for (const authorization of ['Bearer wk_inventedkey_0123456789', 'Basic YWRhOnB3', 'Bearer wk_abcdefghij_nope']) {
        expect((await server.call('/v1/me', { headers: { Authorization: authorization } })).status).toBe(401);
      }
      const refused = await server.call('/v1/me', { apiKey: ada.apiKey });
      expect(refused.status).toBe(429);
      const retryAfter = Number(refused.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThan(0);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect(await refused.json()).toMatchObject({
        code: 'rate_limited',
        detail: expect.stringMatching(/^Too many requests from your address failed authentication \(3 a minute\)/),
      });
      // Refused before any key is looked up: with the database gone, an invented key is still a 429, not a 503.
      await server.database.close();
      expect((await server.call('/v1/me', { headers: { Authorization: 'Bearer wk_inventedkey_x' } })).status).toBe(429);
    } finally {
      await server.close();
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
