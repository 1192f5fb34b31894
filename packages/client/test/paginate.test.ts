import { createClient, operationRoutes, ProblemError } from '../src';
import { closeScriptedServers, problem, scriptedServer } from './support';

afterEach(closeScriptedServers);

const key = (n: number) => ({
  id: `k${n}`,
  name: `Key ${n}`,
  prefix: `wk_${n}`,
  createdAt: '2026-11-22T10:15:00.000Z',
  lastUsedAt: null,
  revokedAt: null,
});
/** One page of `listApiKeys`: the keys numbered `from` to `to`, and the cursor of the last one when more follow. */
const page = (from: number, to: number, more: boolean) => ({
  status: 200,
  body: {
    apiKeys: {
      totalCount: 5,
      edges: Array.from({ length: to - from + 1 }, (_, i) => ({ cursor: `c${from + i}`, node: key(from + i) })),
      pageInfo: { hasNextPage: more, endCursor: to >= from ? `c${to}` : null },
    },
  },
});
const query = (url: string) => Object.fromEntries(new URL(url, 'http://x').searchParams);

describe('paginate', () => {
  it('follows endCursor while hasNextPage, yielding every item in order', async () => {
    const server = await scriptedServer([page(1, 2, true), page(3, 4, true), page(5, 5, false)]);
    const client = createClient({ baseUrl: server.baseUrl, apiKey: 'k', retry: false });
    const ids: string[] = [];
    for await (const apiKey of client.paginate('listApiKeys', { pageSize: 2 })) ids.push(apiKey.id);
    expect(ids).toEqual(['k1', 'k2', 'k3', 'k4', 'k5']);
    expect(server.received.map((r) => query(r.url))).toEqual([
      { limit: '2' },
      { limit: '2', after: 'c2' },
      { limit: '2', after: 'c4' },
    ]);
    expect(server.received[0]!.headers.authorization).toBe('Bearer k');
  });

  it('asks for the largest page the operation allows by default', async () => {
    const server = await scriptedServer([page(1, 1, false)]);
    const client = createClient({ baseUrl: server.baseUrl, apiKey: 'k' });
    for await (const apiKey of client.paginate('listApiKeys')) expect(apiKey.id).toBe('k1');
    expect(query(server.received[0]!.url)).toEqual({ limit: String(operationRoutes.listApiKeys.list.maxPageSize) });
  });

  it('stops after `limit` items, never asking for more than it still needs', async () => {
    const server = await scriptedServer([page(1, 2, true), page(3, 3, true)]);
    const client = createClient({ baseUrl: server.baseUrl, apiKey: 'k' });
    const ids: string[] = [];
    for await (const apiKey of client.paginate('listApiKeys', { pageSize: 2, limit: 3 })) ids.push(apiKey.id);
    expect(ids).toEqual(['k1', 'k2', 'k3']);
    expect(server.received.map((r) => query(r.url))).toEqual([{ limit: '2' }, { limit: '1', after: 'c2' }]);
  });

  it('makes no request for limit 0, and one for an empty list', async () => {
    const server = await scriptedServer([page(1, 0, false)]);
    const client = createClient({ baseUrl: server.baseUrl, apiKey: 'k' });
    for await (const _ of client.paginate('listApiKeys', { limit: 0 })) throw new Error('nothing to yield');
    expect(server.received).toHaveLength(0);
    for await (const _ of client.paginate('listApiKeys')) throw new Error('nothing to yield');
    expect(server.received).toHaveLength(1);
  });

  it("passes the list's path and query parameters and headers with every page", async () => {
    const works = (n: number, more: boolean) => ({
      status: 200,
      body: {
        works: {
          totalCount: 2,
          edges: [{ cursor: `w${n}`, node: { id: `w${n}` } }],
          pageInfo: { hasNextPage: more, endCursor: `w${n}` },
        },
      },
    });
    const server = await scriptedServer([works(1, true), works(2, false)]);
    const client = createClient({ baseUrl: server.baseUrl, apiKey: 'k' });
    const options = {
      params: { path: { tenant_id: 't1' }, query: { discarded: 'all' as const } },
      pageSize: 1,
      headers: { 'X-Request-Id': 'sync-1' },
    };
    const ids: string[] = [];
    for await (const work of client.paginate('listWorks', options)) ids.push(work.id);
    expect(ids).toEqual(['w1', 'w2']);
    expect(server.received.map((r) => r.url)).toEqual([
      '/v1/tenants/t1/works?discarded=all&limit=1',
      '/v1/tenants/t1/works?discarded=all&limit=1&after=w1',
    ]);
    expect(server.received.map((r) => r.headers['x-request-id'])).toEqual(['sync-1', 'sync-1']);
  });

  it('ends with a ProblemError when a page is refused, after the items before it', async () => {
    const server = await scriptedServer([page(1, 1, true), { status: 400, body: problem(400, 'invalid_cursor') }]);
    const client = createClient({ baseUrl: server.baseUrl, apiKey: 'k' });
    const ids: string[] = [];
    const walk = async () => {
      for await (const apiKey of client.paginate('listApiKeys')) ids.push(apiKey.id);
    };
    const error: unknown = await walk().catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(ProblemError);
    expect(error).toMatchObject({ code: 'invalid_cursor', status: 400 });
    expect(ids).toEqual(['k1']);
  });

  it('refuses an operation that is not a list at run time too', async () => {
    const client = createClient({ baseUrl: 'http://127.0.0.1:9', apiKey: 'k' });
    const walk = (client.paginate as (operationId: string) => AsyncGenerator<unknown>)('getMe');
    await expect(walk.next()).rejects.toThrow('getMe is not a list operation');
  });
});
