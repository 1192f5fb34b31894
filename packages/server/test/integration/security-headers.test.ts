import { freshEmail, ok } from '../support/fixtures';
import { rawRequest } from '../support/raw-http';
import { ADMIN_TOKEN, startTestServer, type TestServer, type TestUser } from '../support/server';

/** helmet's headers, no X-Powered-By, and CORS for allow-listed browser origins only. */
let server: TestServer;
let ada: TestUser;
const FRONTEND = 'https://app.example.com';

beforeAll(async () => {
  server = await startTestServer({ corsOrigins: [FRONTEND, 'http://localhost:5173'] });
  ada = await server.createUser('ada');
});
afterAll(() => server.close());

describe('security headers', () => {
  it('sends helmet headers on API responses, errors and probes, and never X-Powered-By', async () => {
    for (const res of [
      await server.call('/v1/me', { apiKey: ada.apiKey }),
      await server.call('/v1/me'),
      await server.call('/healthz'),
    ]) {
      expect(res.headers.get('x-powered-by')).toBeNull();
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('x-frame-options')).toBe('DENY');
      expect(res.headers.get('content-security-policy')).toBe("default-src 'none';frame-ancestors 'none'");
      expect(res.headers.get('strict-transport-security')).toMatch(/^max-age=\d+/);
      expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    }
  });
});

describe('Cache-Control', () => {
  it('says no-store on every /v1 response: above all those that show a secret once, and errors too', async () => {
    const tenantId = ok(await ada.client.POST('/tenants', { body: { name: 'No store' } })).tenant.id;
    const responses = {
      read: await server.call('/v1/me', { apiKey: ada.apiKey }),
      'API key creation (its secret)': await server.call('/v1/api-keys', {
        method: 'POST',
        apiKey: ada.apiKey,
        json: { name: 'shown once' },
      }),
      'webhook endpoint creation (its signing secret)': await server.call(`/v1/tenants/${tenantId}/webhook-endpoints`, {
        method: 'POST',
        apiKey: ada.apiKey,
        json: { url: 'https://8.8.8.8/hooks', enabled: false },
      }),
      "the operator's user creation (the first key's secret)": await server.call('/v1/admin/users', {
        method: 'POST',
        headers: { Authorization: `Bearer ${ADMIN_TOKEN}` },
        json: { email: freshEmail('kept'), firstName: 'Kept', lastName: 'Nowhere' },
      }),
      '401': await server.call('/v1/me'),
      '404': await server.call('/v1/nothing-here', { apiKey: ada.apiKey }),
      '400': await server.call('/v1/tenants?limit=0', { apiKey: ada.apiKey }),
      'CORS preflight': await server.call('/v1/tenants', {
        method: 'OPTIONS',
        headers: { Origin: FRONTEND, 'Access-Control-Request-Method': 'POST' },
      }),
    };
    const seen = Object.fromEntries(
      Object.entries(responses).map(([what, res]) => [what, `${res.status} ${res.headers.get('cache-control')}`]),
    );
    expect(seen).toEqual({
      read: '200 no-store',
      'API key creation (its secret)': '201 no-store',
      'webhook endpoint creation (its signing secret)': '201 no-store',
      "the operator's user creation (the first key's secret)": '201 no-store',
      '401': '401 no-store',
      '404': '404 no-store',
      '400': '400 no-store',
      'CORS preflight': '204 no-store',
    });
    // Outside /v1 each route says its own: the reference may be cached (and revalidated), a probe says nothing.
    expect((await server.call('/openapi.yaml')).headers.get('cache-control')).toBe('no-cache');
    expect((await server.call('/healthz')).headers.get('cache-control')).toBeNull();
  });

  it('says no-store on what Node refuses before the app sees it (a header section too large)', async () => {
    const port = Number(new URL(server.baseUrl).port);
    const res = await rawRequest(port, `GET /v1/me HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(res.status).toBe(431);
    expect(res.headers['cache-control']).toBe('no-store');
  });
});

describe('CORS', () => {
  it('answers a preflight from an allowed origin before authentication, with what a frontend needs', async () => {
    const res = await server.call('/v1/tenants', {
      method: 'OPTIONS',
      headers: {
        Origin: FRONTEND,
        'Access-Control-Request-Method': 'POST',
        'Access-Control-Request-Headers': 'authorization, content-type, idempotency-key',
      },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe(FRONTEND);
    expect(res.headers.get('access-control-allow-methods')).toContain('POST');
    expect(res.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('idempotency-key');
    expect(res.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('if-match');
    expect(res.headers.get('access-control-allow-credentials')).toBeNull();
  });

  it('lets an allowed origin read the response headers that matter', async () => {
    const res = await server.call('/v1/me', { apiKey: ada.apiKey, headers: { Origin: FRONTEND } });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe(FRONTEND);
    const exposed = res.headers.get('access-control-expose-headers')?.split(',') ?? [];
    expect(exposed).toEqual(
      expect.arrayContaining(['ETag', 'X-Request-Id', 'RateLimit', 'RateLimit-Policy', 'Retry-After', 'Location']),
    );
  });

  it('gives other origins no CORS headers at all', async () => {
    const res = await server.call('/v1/me', { apiKey: ada.apiKey, headers: { Origin: 'https://evil.example.com' } });
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    const preflight = await server.call('/v1/me', {
      method: 'OPTIONS',
      headers: { Origin: 'https://app.example.com.evil.example.com', 'Access-Control-Request-Method': 'GET' },
    });
    expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('is off entirely when no origin is configured', async () => {
    const plain = await startTestServer();
    try {
      const res = await plain.call('/healthz', { headers: { Origin: FRONTEND } });
      expect(res.headers.get('access-control-allow-origin')).toBeNull();
    } finally {
      await plain.close();
    }
  });
});
