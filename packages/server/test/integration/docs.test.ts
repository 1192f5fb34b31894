import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { contentSecurityPolicy, docsPath, inlineScripts } from '../../src/http/docs';
import { specPath } from '../../src/http/spec';
import { startTestServer, type TestServer } from '../support/server';

/** GET /openapi.yaml and GET /docs: public, outside /v1, the contract byte for byte and its rendered reference. */
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

describe('GET /openapi.yaml', () => {
  it('serves openapi/api.yaml byte for byte, without a key, revalidated by ETag', async () => {
    const res = await server.call('/openapi.yaml');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/yaml; charset=utf-8');
    const text = await res.text();
    expect(text).toBe(readFileSync(specPath, 'utf8'));
    // First an absolute URL (a generated client works in Node), then the relative one the served reference uses.
    expect(parse(text)).toMatchObject({
      openapi: '3.1.0',
      servers: [{ url: 'http://localhost:3000/v1' }, { url: '/v1' }],
    });

    const etag = res.headers.get('etag');
    expect(etag).toMatch(/^"[\w-]{27}"$/);
    const again = await server.call('/openapi.yaml', { headers: { 'If-None-Match': etag! } });
    expect(again.status).toBe(304);
    // RFC 9110 §13.1.2: If-None-Match compares weakly and may list several tags.
    for (const header of [`W/${etag!}`, `"other", ${etag!}`, '*']) {
      expect((await server.call('/openapi.yaml', { headers: { 'If-None-Match': header } })).status).toBe(304);
    }
    expect((await server.call('/openapi.yaml', { headers: { 'If-None-Match': '"other"' } })).status).toBe(200);
  });
});

describe('GET /docs', () => {
  it('serves the built reference with a CSP that allows exactly its inline scripts', async () => {
    const res = await server.call('/docs');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const html = await res.text();
    expect(html).toBe(readFileSync(docsPath, 'utf8'));

    const policy = res.headers.get('content-security-policy') ?? '';
    expect(policy).toContain("default-src 'none'");
    expect(policy).toContain("frame-ancestors 'none'");
    expect(policy).not.toMatch(/script-src[^;]*'unsafe-inline'/);
    const scripts = inlineScripts(html);
    expect(scripts.length).toBeGreaterThan(0);
    for (const script of scripts) {
      expect(policy).toContain(`'sha256-${createHash('sha256').update(script, 'utf8').digest('base64')}'`);
    }
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('renders every operation of the spec, with the Redoc bundle inlined (no CDN)', async () => {
    const html = await (await server.call('/docs')).text();
    const spec = parse(readFileSync(specPath, 'utf8')) as {
      paths: Record<string, Record<string, { operationId?: string }>>;
    };
    const operationIds = Object.values(spec.paths).flatMap((item) =>
      Object.values(item).flatMap((op) => op.operationId ?? []),
    );
    expect(operationIds.length).toBeGreaterThan(20);
    // The page embeds the whole spec for Redoc to render; each operation is in it.
    for (const operationId of operationIds) expect(html).toContain(`"operationId":"${operationId}"`);
    expect(html).not.toMatch(/<script[^>]+src=/i);
  });

  it('shows the one scope each operation needs, as its bearerAuth requirement ("Required scopes" in Redoc)', async () => {
    const html = await (await server.call('/docs')).text();
    const spec = parse(readFileSync(specPath, 'utf8')) as {
      paths: Record<string, Record<string, { operationId?: string; 'x-required-scope'?: string }>>;
    };
    const scoped = Object.values(spec.paths).flatMap((item) =>
      Object.values(item).flatMap((op) => (op.operationId && op['x-required-scope'] ? [op] : [])),
    );
    expect(scoped.length).toBeGreaterThan(40);
    for (const { operationId, 'x-required-scope': scope } of scoped) {
      // The embedded spec writes an operation's keys in order: its operationId first, the security it was given last.
      const at = html.indexOf(`"operationId":"${operationId}","x-required-scope":"${scope}"`);
      expect({ operationId, found: at >= 0 }).toEqual({ operationId, found: true });
      // One requirement per way in (an API key, a session cookie): the key's names the scope.
      const security = /"security":(\[(?:\{[^}]*\},?)*\])/.exec(html.slice(at))?.[1];
      const requirements = JSON.parse(security ?? '[]') as Record<string, string[]>[];
      const keyed = requirements.find((requirement) => Object.hasOwn(requirement, 'bearerAuth'));
      expect({ operationId, keyed }).toEqual({ operationId, keyed: { bearerAuth: [scope] } });
    }
  });

  it('answers a Redoc page reload (/docs/...) with the same page', async () => {
    const res = await server.call('/docs/section/errors');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
  });
});

describe('contentSecurityPolicy', () => {
  it('hashes inline scripts only, as the browser delimits them', () => {
    const html = '<script src="/x.js"></script><script type="module">a()</script><SCRIPT>b()</SCRIPT >';
    expect(inlineScripts(html)).toEqual(['a()', 'b()']);
    const policy = contentSecurityPolicy(html);
    const hash = (text: string) => createHash('sha256').update(text).digest('base64');
    expect(policy).toContain(`script-src 'sha256-${hash('a()')}' 'sha256-${hash('b()')}';`);
  });
});
