import { createLogger } from '../../src/observability/logger';
import { Writable } from 'node:stream';
import { createTenant } from '../support/fixtures';
import { ADMIN_TOKEN, startTestServer, type TestServer, type TestUser } from '../support/server';

/** X-Request-Id on every response, and one structured access line per request with nothing secret in it. */
let server: TestServer;
let ada: TestUser;

beforeAll(async () => {
  server = await startTestServer();
  ada = await server.createUser('ada');
});
afterAll(() => server.close());

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

const accessLines = () => server.logs.filter((line) => line.msg === 'request');

describe('X-Request-Id', () => {
  it('echoes a valid incoming id', async () => {
    const res = await server.call('/v1/me', {
      apiKey: ada.apiKey,
      headers: { 'X-Request-Id': 'partner-trace:42/a.b@c=d+e' },
    });
    expect(res.headers.get('x-request-id')).toBe('partner-trace:42/a.b@c=d+e');
  });

  it('makes a new id when there is none or the incoming one is not acceptable', async () => {
    for (const incoming of [undefined, '', 'x'.repeat(129), 'has space', 'quote"s', '-leading-dash']) {
      const res = await server.call('/v1/me', {
        apiKey: ada.apiKey,
        headers: incoming === undefined ? {} : { 'X-Request-Id': incoming },
      });
      expect(res.headers.get('x-request-id')).toMatch(UUID);
    }
  });

  it('is on every response, whoever answers it: errors, refusals, unknown routes, probes', async () => {
    const responses = await Promise.all([
      server.call('/v1/me'),
      server.call('/v1/tenants', { method: 'POST', apiKey: ada.apiKey, json: { name: '' } }),
      server.call('/v1/tenants', {
        method: 'POST',
        apiKey: ada.apiKey,
        body: '{',
        headers: { 'Content-Type': 'application/json' },
      }),
      server.call('/v1/nowhere', { apiKey: ada.apiKey }),
      server.call('/not-an-api-path'),
      server.call('/healthz'),
    ]);
    expect(responses.map((res) => res.status)).toEqual([401, 400, 400, 404, 404, 200]);
    for (const res of responses) expect(res.headers.get('x-request-id')).toMatch(UUID);
  });
});

describe('access log', () => {
  it('writes one JSON line per request: method, route template, status, duration, request id, user id', async () => {
    const tenant = await createTenant(ada);
    const res = await server.call(`/v1/tenants/${tenant.id}`, {
      apiKey: ada.apiKey,
      headers: { 'X-Request-Id': 'log-check-1' },
    });
    expect(res.status).toBe(200);
    await res.text();
    const lines = accessLines().filter((line) => line.reqId === 'log-check-1');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 'info',
      msg: 'request',
      method: 'GET',
      route: '/v1/tenants/{tenant_id}',
      status: 200,
      userId: ada.id,
    });
    expect(typeof lines[0]!.ms).toBe('number');
    expect(typeof lines[0]!.time).toBe('string');
  });

  it('names the route template even for requests refused before validation, and none for unknown paths', async () => {
    await (
      await server.call('/v1/tenants/0193a1b2-7c3d-7e4f-8a9b-0c1d2e3f4a5b/works', {
        headers: { 'X-Request-Id': 'log-check-401' },
      })
    ).text();
    await (await server.call('/wp-login.php?x=1', { headers: { 'X-Request-Id': 'log-check-404' } })).text();
    const byId = (id: string) => accessLines().find((line) => line.reqId === id);
    expect(byId('log-check-401')).toMatchObject({ route: '/v1/tenants/{tenant_id}/works', status: 401, userId: null });
    expect(byId('log-check-404')).toMatchObject({ route: null, status: 404 });
  });

  it('never writes API keys, operator tokens or created secrets', async () => {
    const created = await server.call('/v1/api-keys', {
      method: 'POST',
      apiKey: ada.apiKey,
      json: { name: 'Secret holder' },
      headers: { 'X-Request-Id': 'log-check-secret' },
    });
    const { apiKey } = await created.json();
    await (await server.call('/v1/me', { headers: { Authorization: `Bearer ${apiKey.secret}` } })).text();
    await (
      await server.call('/v1/me', { headers: { Authorization: 'Bearer wk_wrongwrong_notavalidsecretatall' } })
    ).text();
    const everything = server.rawLogs.join('\n');
    expect(server.rawLogs.length).toBeGreaterThan(5);
    for (const secret of [ada.apiKey, apiKey.secret, ADMIN_TOKEN, 'notavalidsecretatall']) {
      expect(everything).not.toContain(secret);
    }
    expect(everything).not.toMatch(/authorization/i);
    expect(accessLines().find((line) => line.reqId === 'log-check-secret')).toMatchObject({
      status: 201,
      route: '/v1/api-keys',
    });
  });

  it('redacts secrets in anything else logged with the same logger (error lines, request details)', () => {
    const lines: string[] = [];
    const logger = createLogger(
      'info',
      new Writable({ write: (chunk, _e, done) => void (lines.push(String(chunk)), done()) }),
    );
    logger.error(
      {
        req: { headers: { authorization: 'Bearer wk_leak_leak', cookie: 'session=leak' } },
        apiKey: { id: 'k1', secret: 'wk_secret_leak' },
        headers: { authorization: 'Bearer other-leak' },
        adminToken: 'operator-leak',
      },
      'boom',
    );
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toMatch(/leak/);
    expect(JSON.parse(lines[0]!)).toMatchObject({
      req: { headers: { authorization: '[redacted]', cookie: '[redacted]' } },
      apiKey: { id: 'k1', secret: '[redacted]' },
      headers: { authorization: '[redacted]' },
      adminToken: '[redacted]',
    });
  });
});
