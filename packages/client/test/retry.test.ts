import { createClient, isRetryable, parseRetryAfter } from '../src';
import { defaultSleep } from '../src/retry';
import { closeScriptedServers, problem, recordingSleep, scriptedServer, user } from './support';

afterEach(closeScriptedServers);

const tenantBody = { name: 'Acme Research' };
const tenant = {
  id: 't1',
  name: 'Acme Research',
  slug: 'acme-research',
  owner: { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' },
  createdAt: '2026-11-22T10:15:00.000Z',
  updatedAt: '2026-11-22T10:15:00.000Z',
  members: { nodes: [] },
  works: { totalCount: 0, edges: [], pageInfo: { hasNextPage: false, endCursor: null } },
};

async function setup(replies: Parameters<typeof scriptedServer>[0], retry: Record<string, unknown> = {}) {
  const server = await scriptedServer(replies);
  const { sleep, waits } = recordingSleep();
  const client = createClient({
    baseUrl: server.baseUrl,
    apiKey: 'wk_test',
    retry: { sleep, random: () => 0.5, ...retry },
  });
  return { server, client, waits };
}

describe('retries', () => {
  it('retries a GET on 503 with exponential backoff and full jitter, then returns the success', async () => {
    const { server, client, waits } = await setup([{ status: 503 }, { status: 503 }, { status: 200, body: { user } }]);
    const result = await client.getMe();
    expect(result.data).toEqual({ user });
    expect(server.received.map((r) => `${r.method} ${r.url}`)).toEqual(Array(3).fill('GET /v1/me'));
    expect(waits).toEqual([125, 250]); // random 0.5 × 250 ms × 2^(attempt-1)
    await server.close();
  });

  it('waits the seconds a 429 Retry-After asks for', async () => {
    const { server, client, waits } = await setup([
      { status: 429, headers: { 'Retry-After': '2' }, body: problem(429, 'rate_limited') },
      { status: 200, body: { user } },
    ]);
    expect((await client.getMe()).data).toEqual({ user });
    expect(waits).toEqual([2000]);
    expect(server.received).toHaveLength(2);
    await server.close();
  });

  it('waits until a Retry-After HTTP date', async () => {
    const now = Date.parse('2026-11-22T10:15:00.000Z');
    const { server, client, waits } = await setup(
      [
        { status: 503, headers: { 'Retry-After': 'Sun, 22 Nov 2026 10:15:03 GMT' } },
        { status: 200, body: { user } },
      ],
      { now: () => now },
    );
    expect((await client.getMe()).data).toEqual({ user });
    expect(waits).toEqual([3000]);
    await server.close();
  });

  it('returns the 429 at once when Retry-After is longer than maxDelayMs', async () => {
    const { server, client, waits } = await setup(
      [{ status: 429, headers: { 'Retry-After': '120' }, body: problem(429, 'rate_limited') }],
      { maxDelayMs: 10_000 },
    );
    const result = await client.getMe();
    expect(result.error).toMatchObject({ status: 429, code: 'rate_limited' });
    expect(result.response.headers.get('Retry-After')).toBe('120');
    expect(waits).toEqual([]);
    expect(server.received).toHaveLength(1);
    await server.close();
  });

  it('gives up after maxAttempts and returns the last answer as a Problem', async () => {
    const { server, client, waits } = await setup([{ status: 503, body: problem(503, 'unavailable') }], {
      maxAttempts: 4,
    });
    const result = await client.getMe();
    expect(result.error).toMatchObject({ status: 503, code: 'unavailable' });
    expect(server.received).toHaveLength(4);
    expect(waits).toEqual([125, 250, 500]);
    await server.close();
  });

  it('retries a creating POST with the same Idempotency-Key and the same body', async () => {
    const { server, client } = await setup([{ status: 503 }, { status: 201, body: { tenant } }]);
    const result = await client.createTenant({ body: tenantBody });
    expect(result.response.status).toBe(201);
    expect(result.data?.tenant.id).toBe('t1');
    const [first, second] = server.received;
    expect(first!.headers['idempotency-key']).toMatch(/^[0-9a-f-]{36}$/);
    expect(second!.headers['idempotency-key']).toBe(first!.headers['idempotency-key']);
    expect(JSON.parse(second!.body)).toEqual(tenantBody);
    expect(second!.body).toBe(first!.body);
    await server.close();
  });

  it('never retries a PATCH (not idempotent)', async () => {
    const { server, client, waits } = await setup([{ status: 503 }, { status: 200, body: { tenant } }]);
    const result = await client.updateTenant({ params: { path: { tenant_id: 't1' } }, body: { name: 'New name' } });
    expect(result.response.status).toBe(503);
    expect(server.received).toHaveLength(1);
    expect(waits).toEqual([]);
    await server.close();
  });

  it('does not retry other errors (500, 409)', async () => {
    const { server, client } = await setup([{ status: 500, body: problem(500, 'internal_error') }]);
    expect((await client.getMe()).error).toMatchObject({ code: 'internal_error' });
    expect(server.received).toHaveLength(1);
    await server.close();
  });

  it('retries a GET after a network error, but lets a PATCH network error through', async () => {
    const { server, client, waits } = await setup([
      { status: 0, destroy: true },
      { status: 200, body: { user } },
    ]);
    expect((await client.getMe()).data).toEqual({ user });
    expect(server.received).toHaveLength(2);
    expect(waits).toEqual([125]);

    const patching = await setup([
      { status: 0, destroy: true },
      { status: 200, body: { tenant } },
    ]);
    await expect(
      patching.client.updateTenant({ params: { path: { tenant_id: 't1' } }, body: { name: 'New name' } }),
    ).rejects.toMatchObject({ name: 'TypeError' });
    expect(patching.server.received).toHaveLength(1);
    await Promise.all([server.close(), patching.server.close()]);
  });

  it('can be turned off', async () => {
    const server = await scriptedServer([{ status: 503 }, { status: 200, body: { user } }]);
    const client = createClient({ baseUrl: server.baseUrl, apiKey: 'wk_test', retry: false });
    expect((await client.getMe()).response.status).toBe(503);
    expect(server.received).toHaveLength(1);
    await server.close();
  });

  it('stops waiting when the caller aborts', async () => {
    const server = await scriptedServer([
      { status: 503, headers: { 'Retry-After': '5' } },
      { status: 200, body: { user } },
    ]);
    const controller = new AbortController();
    // The real sleep; the caller aborts once the client is in it (not after a guessed time, which a loaded machine
    // may reach before the first answer).
    const sleep: typeof defaultSleep = (ms, signal) => {
      const sleeping = defaultSleep(ms, signal);
      setImmediate(() => controller.abort());
      return sleeping;
    };
    const client = createClient({ baseUrl: server.baseUrl, apiKey: 'wk_test', retry: { sleep } });
    const started = Date.now();
    await expect(client.getMe({ signal: controller.signal })).rejects.toMatchObject({ name: 'AbortError' });
    expect(Date.now() - started).toBeLessThan(5000); // the 5 s Retry-After cut short
    expect(server.received).toHaveLength(1);
    await server.close();
  });
});

describe('isRetryable', () => {
  const url = 'http://127.0.0.1/v1/tenants';
  it.each([
    ['GET', {}, true],
    ['PUT', {}, true],
    ['DELETE', {}, true],
    ['PATCH', {}, false],
    ['POST', {}, false],
    ['POST', { 'Idempotency-Key': 'k1' }, true],
  ])('%s %j → %s', (method, headers, expected) => {
    expect(isRetryable(new Request(url, { method, headers }))).toBe(expected);
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-11-22T10:15:00.000Z');
  it.each([
    ['0', 0],
    ['7', 7000],
    [' 12 ', 12_000],
    ['Sun, 22 Nov 2026 10:15:10 GMT', 10_000],
    ['Sun, 22 Nov 2026 10:14:00 GMT', 0],
    ['soon', undefined],
    ['-1', undefined],
  ])('%j → %s', (value, expected) => {
    expect(parseRetryAfter(value, now)).toBe(expected);
  });
  it('is undefined without the header', () => expect(parseRetryAfter(null, now)).toBeUndefined());
});
