import {
  createClient,
  isInsufficientScope,
  isProblem,
  operationRoutes,
  ProblemError,
  requiredScopes,
  scopes,
  unwrap,
} from '../src';
import { closeScriptedServers, problem, scriptedServer, user } from './support';

afterEach(closeScriptedServers);

const work = {
  id: 'w1',
  slug: 'annual-report',
  name: 'Annual report',
  description: '',
  createdAt: '2026-11-22T10:15:00.000Z',
  updatedAt: '2026-11-22T10:15:00.000Z',
  discardedAt: null,
  owner: { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' },
};

describe('createClient', () => {
  it('has one method per operation of the contract, calling its method and path', async () => {
    const server = await scriptedServer([{ status: 200, body: { work } }]);
    const client = createClient({ baseUrl: server.baseUrl, apiKey: 'wk_secret' });
    for (const operationId of Object.keys(operationRoutes)) {
      expect(typeof client[operationId as keyof typeof operationRoutes]).toBe('function');
    }
    const result = await client.getWork({ params: { path: { tenant_id: 't1', work_id: 'w1' } } });
    expect(result.data).toEqual({ work });
    expect(server.received[0]).toMatchObject({ method: 'GET', url: '/v1/tenants/t1/works/w1' });
    expect(server.received[0]!.headers.authorization).toBe('Bearer wk_secret');
    await server.close();
  });

  it('accepts a baseUrl that already ends in /v1, and keeps the generic openapi-fetch methods', async () => {
    const server = await scriptedServer([{ status: 200, body: { user } }]);
    const client = createClient({
      baseUrl: `${server.baseUrl}/v1/`,
      apiKey: 'wk_secret',
      headers: { 'User-Agent': 'partner/1.0' },
    });
    expect((await client.GET('/me')).data).toEqual({ user });
    expect(server.received[0]).toMatchObject({ url: '/v1/me' });
    expect(server.received[0]!.headers['user-agent']).toBe('partner/1.0');
    await server.close();
  });
});

describe('Idempotency-Key', () => {
  it('is generated for every creating POST, through operation methods and POST() alike, and differs per call', async () => {
    const server = await scriptedServer([{ status: 201, body: { work } }]);
    const client = createClient({ baseUrl: server.baseUrl, apiKey: 'k' });
    await client.createWork({ params: { path: { tenant_id: 't1' } }, body: { name: 'Annual report' } });
    await client.POST('/tenants/{tenant_id}/works', {
      params: { path: { tenant_id: 't1' } },
      body: { name: 'Annual report' },
    });
    const keys = server.received.map((r) => r.headers['idempotency-key']);
    expect(keys[0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(keys[1]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[0]).not.toBe(keys[1]);
    await server.close();
  });

  it('keeps a key the caller gives, and uses a custom generator', async () => {
    const server = await scriptedServer([{ status: 201, body: { work } }]);
    const client = createClient({ baseUrl: server.baseUrl, apiKey: 'k', idempotencyKey: () => 'generated-key' });
    await client.createWork({
      params: { path: { tenant_id: 't1' } },
      body: { name: 'Annual report' },
      headers: { 'Idempotency-Key': 'order-4711' },
    });
    await client.createWork({ params: { path: { tenant_id: 't1' } }, body: { name: 'Annual report' } });
    expect(server.received.map((r) => r.headers['idempotency-key'])).toEqual(['order-4711', 'generated-key']);
    await server.close();
  });

  it('is not sent with reads, updates and actions', async () => {
    const server = await scriptedServer([{ status: 200, body: { work } }]);
    const client = createClient({ baseUrl: server.baseUrl, apiKey: 'k' });
    await client.getWork({ params: { path: { tenant_id: 't1', work_id: 'w1' } } });
    await client.updateWork({ params: { path: { tenant_id: 't1', work_id: 'w1' } }, body: { name: 'x' } });
    await client.undiscardWork({ params: { path: { tenant_id: 't1', work_id: 'w1' } } });
    expect(server.received.map((r) => r.headers['idempotency-key'])).toEqual([undefined, undefined, undefined]);
    await server.close();
  });
});

describe('errors are typed Problems', () => {
  it('returns the problem+json body as error', async () => {
    const server = await scriptedServer([{ status: 404, body: problem(404, 'not_found') }]);
    const client = createClient({ baseUrl: server.baseUrl, apiKey: 'k' });
    const result = await client.getWork({ params: { path: { tenant_id: 't1', work_id: 'w1' } } });
    expect(result.data).toBeUndefined();
    expect(result.error).toEqual(problem(404, 'not_found'));
    expect(isProblem(result.error)).toBe(true);
    await server.close();
  });

  it('turns a non-problem error (a proxy HTML page) into an unexpected_response Problem', async () => {
    const server = await scriptedServer([{ status: 502, body: '<html><body>Bad gateway</body></html>' }]);
    const client = createClient({ baseUrl: server.baseUrl, apiKey: 'k' });
    const result = await client.getMe();
    expect(result.error).toMatchObject({
      status: 502,
      code: 'unexpected_response',
      detail: '<html><body>Bad gateway</body></html>',
      instance: '/v1/me',
    });
    expect(isProblem(result.error)).toBe(true);
    await server.close();
  });

  it('unwrap() returns data, or throws a ProblemError with the typed problem', async () => {
    const server = await scriptedServer([
      { status: 200, body: { user } },
      { status: 401, body: problem(401, 'unauthenticated') },
    ]);
    const client = createClient({ baseUrl: server.baseUrl, apiKey: 'k' });
    expect(unwrap(await client.getMe()).user.email).toBe('ada@example.com');
    const failed = await client.getMe();
    expect(() => unwrap(failed)).toThrow(ProblemError);
    try {
      unwrap(failed);
    } catch (error) {
      expect(error).toMatchObject({ status: 401, code: 'unauthenticated', problem: problem(401, 'unauthenticated') });
    }
    await server.close();
  });
});

describe('scopes', () => {
  it('names the scope of every operation an API key calls, each from the closed set', () => {
    // The operator's, the recipient's and signing in: none is called with an API key.
    const keyless = [
      'adminCreateUser',
      'adminGetUser',
      'getRecipientRequest',
      'answerRecipientRequest',
      'createSignIn',
      'createSession',
    ];
    expect(Object.keys(requiredScopes).sort()).toEqual(
      Object.keys(operationRoutes)
        .filter((id) => !keyless.includes(id))
        .sort(),
    );
    for (const scope of Object.values(requiredScopes)) expect(scopes).toContain(scope);
  });

  it('reads a 403 insufficient_scope with the scope the key lacks', async () => {
    const refused = { ...problem(403, 'insufficient_scope'), scope: 'works:write' };
    const server = await scriptedServer([{ status: 403, body: refused }]);
    const client = createClient({ baseUrl: server.baseUrl, apiKey: 'k' });
    const result = await client.createWork({ params: { path: { tenant_id: 't1' } }, body: { name: 'Report' } });
    expect(isInsufficientScope(result.error)).toBe(true);
    if (result.error?.code === 'insufficient_scope') expect(result.error.scope).toBe('works:write');
    expect(isInsufficientScope(problem(403, 'forbidden'))).toBe(false);
    await server.close();
  });
});

describe('responses that gained properties (what /v1 may add at any time)', () => {
  it('parse and keep the known fields, whether they are in a resource, a page or a problem', async () => {
    const newer = { ...work, colour: 'teal', owner: { ...work.owner, pronouns: 'she/her' } };
    const server = await scriptedServer([
      { status: 200, body: { work: newer, links: { self: '/v1/works/w1' } } },
      {
        status: 200,
        body: {
          works: {
            totalCount: 1,
            edges: [{ cursor: 'c1', node: newer, rank: 1 }],
            pageInfo: { hasNextPage: false, endCursor: 'c1', startCursor: 'c1' },
            searchedAt: '2026-11-26T10:00:00.000Z',
          },
        },
      },
      { status: 409, body: { ...problem(409, 'work_discarded'), retryable: false, docs: 'https://example.com' } },
    ]);
    const client = createClient({ baseUrl: server.baseUrl, apiKey: 'k', retry: false });
    const path = { tenant_id: 't1', work_id: 'w1' };

    const { work: read } = unwrap(await client.getWork({ params: { path } }));
    expect(read).toMatchObject({ id: 'w1', name: 'Annual report', owner: { email: 'ada@example.com' } });
    expect(read).toHaveProperty('colour', 'teal');

    const paged = [];
    for await (const item of client.paginate('listWorks', { params: { path: { tenant_id: 't1' } } })) paged.push(item);
    expect(paged.map((item) => item.id)).toEqual(['w1']);

    const result = await client.createRequest({
      params: { path },
      body: { title: 'Sign', recipient: { email: 'grace@example.com' } },
    });
    expect(isProblem(result.error)).toBe(true);
    expect(result.error).toMatchObject({ status: 409, code: 'work_discarded', retryable: false });
    await server.close();
  });
});
