import { createClient } from '@redis/client';
import { connectRedis, type RedisConnection } from '../../src/http/rate-limit';
import { silentLogger } from '../../src/http/logger';
import { startTestServer, type TestServer, type TestUser } from '../support/server';

/** Rate limits per API key: headers, 429 problem+json with Retry-After, exemptions, and a budget shared through Redis. */

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

  it('counts each API key on its own, and never limits health probes or operator routes', async () => {
    const bob = await server.createUser('bob');
    const created = await server.call('/v1/api-keys', { method: 'POST', apiKey: bob.apiKey, json: { name: 'second' } });
    expect(created.status).toBe(201);
    const secondKey = (await created.json()).apiKey.secret as string;
    for (let i = 0; i < 2; i++) expect((await server.call('/v1/me', { apiKey: bob.apiKey })).status).toBe(200);
    expect((await server.call('/v1/me', { apiKey: bob.apiKey })).status).toBe(429);
    // Same user, other key: a budget of its own.
    expect((await server.call('/v1/me', { apiKey: secondKey })).status).toBe(200);

    for (let i = 0; i < 5; i++) {
      const probe = await server.call('/healthz');
      expect(probe.status).toBe(200);
      expect(probe.headers.get('ratelimit')).toBeNull();
    }
    // createUser goes through the operator route: already more than 3 calls in this file.
    expect((await server.createUser('carol')).apiKey).toMatch(/^wk_/);
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
