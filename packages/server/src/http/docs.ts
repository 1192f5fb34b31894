import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { type Response, Router } from 'express';
import { bytesTag, noneMatchHit } from './etag';
import { sendProblem } from './problems';
import { specPath } from './spec';

/** The reference `pnpm build` renders from the spec with Redocly (openapi/dist/index.html, not committed). */
export const docsPath = path.resolve(__dirname, '../../../../openapi/dist/index.html');

/**
 * GET /openapi.yaml (the contract, byte for byte) and GET /docs (the rendered reference), outside /v1 and
 * without authentication: partners read them before they have a key. Both files are read once, at start-up.
 */
export function docsRoutes(files: { spec?: string; docs?: string } = {}): Router {
  const spec = readFileSync(files.spec ?? specPath);
  const specTag = bytesTag(spec);
  const docs = readIfPresent(files.docs ?? docsPath);
  const docsTag = docs && bytesTag(docs);
  const policy = docs && contentSecurityPolicy(docs.toString('utf8'));

  const router = Router({ caseSensitive: true }); // as the app's routing (app.ts)
  router.get('/openapi.yaml', (req, res) => {
    res.set('Cache-Control', 'no-cache').set('ETag', specTag).set('X-Content-Type-Options', 'nosniff');
    if (noneMatchHit(req.headers['if-none-match'], specTag)) return void res.status(304).end();
    res.type('application/yaml; charset=utf-8').send(spec);
  });
  // Redoc routes its pages under /docs (/docs/tenants, /docs/section/errors): a reload of one gets the same page.
  router.get(['/docs', '/docs/{*page}'], (req, res) => {
    if (!docs || !docsTag || !policy) {
      return sendProblem(res, 'not_found', 'The reference is not built: run `pnpm build`.', req.path);
    }
    secureHtml(res, policy);
    res.set('Cache-Control', 'no-cache').set('ETag', docsTag);
    if (noneMatchHit(req.headers['if-none-match'], docsTag)) return void res.status(304).end();
    res.type('text/html; charset=utf-8').send(docs);
  });
  return router;
}

/**
 * Redoc's page runs inline scripts (its bundle and the embedded spec) and injects inline styles. The policy allows
 * exactly those scripts, by hash, and nothing from elsewhere: no CDN, no telemetry, no frames.
 */
export function contentSecurityPolicy(html: string): string {
  const hashes = inlineScripts(html).map(
    (script) => `'sha256-${createHash('sha256').update(script, 'utf8').digest('base64')}'`,
  );
  return [
    "default-src 'none'",
    `script-src ${hashes.join(' ')}`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "worker-src 'self' blob:",
    "manifest-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** The text of every `<script>` without `src`, as the browser sees it (a script ends at the first `</script`). */
export function inlineScripts(html: string): string[] {
  const scripts: string[] = [];
  for (const match of html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script/gi)) {
    if (!/\bsrc\s*=/i.test(match[1] ?? '')) scripts.push(match[2] ?? '');
  }
  return scripts;
}

/** Headers of every HTML page we serve (the reference, the console): its CSP, no sniffing, no referrer, no opener. */
export function secureHtml(res: Response, policy: string): void {
  res
    .set('Content-Security-Policy', policy)
    .set('X-Content-Type-Options', 'nosniff')
    .set('Referrer-Policy', 'no-referrer')
    .set('Cross-Origin-Opener-Policy', 'same-origin');
}

/** A file's bytes, or undefined when it is not there (a build that has not run). */
export function readIfPresent(file: string): Buffer | undefined {
  try {
    return readFileSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}
