import { createClient } from '@redis/client';
import { ADMIN_TOKEN, createUserAt } from '../support/server';
import { type ServerProcess, spawnServer } from '../support/process';

/** Two server processes, one PostgreSQL, one Redis: one rate-limit budget per API key across both. */

const { REDIS_URL, DATABASE_URL } = process.env;
const bothServices = REDIS_URL && DATABASE_URL ? describe : describe.skip;
if (!(REDIS_URL && DATABASE_URL)) {
  console.log(
    'shared-rate-limit: two server processes need a shared PostgreSQL and Redis; skipped (set DATABASE_URL and REDIS_URL)',
  );
}

bothServices('rate limit across two server processes', () => {
  const prefix = `works-api-test-http:${process.pid}:${Date.now()}:`;
  let servers: ServerProcess[] = [];

  afterAll(async () => {
    for (const server of servers) server.child.kill('SIGTERM');
    await Promise.all(servers.map((server) => server.exited));
    const redis = createClient({ url: REDIS_URL });
    await redis.connect();
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(keys);
    await redis.close();
  });

  it('counts one budget per key for both, and both answer 429 once it is spent', async () => {
    const env = {
      DATABASE_URL: DATABASE_URL!,
      REDIS_URL: REDIS_URL!,
      REDIS_PREFIX: prefix,
      RATE_LIMIT_PER_MINUTE: '4',
      ADMIN_TOKEN,
    };
    servers = await Promise.all([spawnServer(env), spawnServer(env)]);
    const [a, b] = servers as [ServerProcess, ServerProcess];
    for (const server of servers) {
      expect(server.lines.find((line) => line.msg === 'works-api starting')?.config).toMatchObject({
        rateLimit: expect.stringContaining(`counted in Redis at`),
      });
    }
    const { apiKey } = await createUserAt(a.baseUrl, 'shared');
    const me = (server: ServerProcess) =>
      fetch(`${server.baseUrl}/v1/me`, { headers: { Authorization: `Bearer ${apiKey}` } });

    const left: string[] = [];
    for (const server of [a, b, a, b]) {
      const res = await me(server);
      expect(res.status).toBe(200);
      left.push(/r=(\d+)/.exec(res.headers.get('ratelimit') ?? '')?.[1] ?? '?');
    }
    expect(left).toEqual(['3', '2', '1', '0']);
    for (const server of [a, b]) {
      const refused = await me(server);
      expect(refused.status).toBe(429);
      expect(((await refused.json()) as { code: string }).code).toBe('rate_limited');
    }
  });
});
