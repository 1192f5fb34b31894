import { startTestServer, type TestServer, type TestUser } from '../support/server';

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
