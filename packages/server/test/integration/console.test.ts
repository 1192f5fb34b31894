import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import express from 'express';
import { CONSOLE_CSP, consoleRoutes } from '../../src/http/console';
import { securityHeaders } from '../../src/http/security';
import { startTestServer } from '../support/server';

/**
 * GET /console serves the web console's build (packages/console/dist): the page on every client-side route,
 * hashed assets cached for a year. Checked here on a small build of our own; the console's browser tests
 * (packages/console/e2e) run the real one.
 */
const INDEX =
  '<!doctype html><title>console</title><script type="module" src="/console/assets/app-Abc123.js"></script>';
let dir: string;
let baseUrl: string;
let close: () => Promise<void>;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'console-build-'));
  mkdirSync(path.join(dir, 'assets'));
  writeFileSync(path.join(dir, 'index.html'), INDEX);
  writeFileSync(path.join(dir, 'assets/app-Abc123.js'), 'console.log("app")');
  const app = express();
  app.use(securityHeaders(), consoleRoutes(dir));
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  close = () => new Promise((resolve) => server.close(() => resolve()));
});
afterAll(async () => {
  await close();
  rmSync(dir, { recursive: true, force: true });
});

describe('GET /console', () => {
  it.each(['/console', '/console/', '/console/tenants/0193a1b2-7c3d/works', '/console/api-keys'])(
    'answers %s with the page, under the console CSP, revalidated by ETag',
    async (route) => {
      const res = await fetch(baseUrl + route);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(await res.text()).toBe(INDEX);
      expect(res.headers.get('content-security-policy')).toBe(CONSOLE_CSP);
      expect(res.headers.get('cache-control')).toBe('no-cache');
      expect(res.headers.get('x-frame-options')).toBe('DENY');
      const again = await fetch(baseUrl + route, { headers: { 'If-None-Match': res.headers.get('etag')! } });
      expect(again.status).toBe(304);
      const weakInAList = await fetch(baseUrl + route, {
        headers: { 'If-None-Match': `"other", W/${res.headers.get('etag')!}` },
      });
      expect(weakInAList.status).toBe(304);
    },
  );

  it('allows its own scripts, styles and API calls only: nothing inline, nothing from elsewhere, no form targets', () => {
    const directives = Object.fromEntries(
      CONSOLE_CSP.split('; ').map((directive) => [directive.split(' ')[0], directive]),
    );
    expect(directives['default-src']).toBe("default-src 'none'");
    expect(directives['script-src']).toBe("script-src 'self'");
    expect(directives['style-src']).toBe("style-src 'self'");
    expect(directives['connect-src']).toBe("connect-src 'self'");
    expect(directives['form-action']).toBe("form-action 'none'");
    expect(directives['frame-ancestors']).toBe("frame-ancestors 'none'");
    expect(CONSOLE_CSP).not.toContain('unsafe');
  });

  it('serves hashed assets with a year of immutable caching, and a 404 problem (not the page) for a missing one', async () => {
    const res = await fetch(`${baseUrl}/console/assets/app-Abc123.js`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/javascript|^application\/javascript/);
    expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(await res.text()).toBe('console.log("app")');

    const missing = await fetch(`${baseUrl}/console/assets/app-Old999.js`);
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  });

  it('says how to build it when there is no build', async () => {
    const app = express();
    app.use(consoleRoutes(path.join(dir, 'missing')));
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/console/tenants`);
      expect(res.status).toBe(404);
      expect(((await res.json()) as { detail: string }).detail).toBe('The console is not built: run `pnpm build`.');
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('is mounted by the app, outside /v1 and without a key', async () => {
    const server = await startTestServer();
    try {
      const res = await server.call('/console/tenants');
      expect(res.headers.get('www-authenticate')).toBeNull();
      // The page once `pnpm build` has built the console; before, a 404 that says so (not the app's plain 404).
      if (res.status === 200) expect(res.headers.get('content-security-policy')).toBe(CONSOLE_CSP);
      else expect((await res.json()).detail).toBe('The console is not built: run `pnpm build`.');
    } finally {
      await server.close();
    }
  });
});
