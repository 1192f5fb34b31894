import path from 'node:path';
import express, { Router } from 'express';
import { readIfPresent, secureHtml } from './docs';
import { bytesTag, noneMatchHit } from './etag';
import { sendProblem } from './problems';

/** The web console's production build (packages/console, `pnpm build`; not committed). */
export const consoleDir = path.resolve(__dirname, '../../../console/dist');

/**
 * The console is a static single-page app: its own scripts and styles, and calls to /v1 on this origin. Nothing
 * inline, nothing from elsewhere; forms never submit anywhere (they are handled by script), so a form cannot put
 * an API key in a URL even if the script failed.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * GET /console and everything under it, outside /v1 and without authentication (the page asks for a key):
 * - /console/assets/*: the build's content-hashed files, cached for a year (a new build has new names);
 * - any other path: index.html (the app routes on the client, so a reload of /console/tenants/… works),
 *   revalidated on every load so a new build shows at once.
 * Before `pnpm build` has built the console, these answer 404 saying so.
 */
export function consoleRoutes(dir: string = consoleDir): Router {
  const router = Router({ caseSensitive: true }); // as the app's routing (app.ts)
  const index = readIfPresent(path.join(dir, 'index.html'));
  if (!index) {
    router.get(['/console', '/console/{*page}'], (req, res) =>
      sendProblem(res, 'not_found', 'The console is not built: run `pnpm build`.', req.path),
    );
    return router;
  }
  const indexTag = bytesTag(index);

  router.use(
    '/console/assets',
    express.static(path.join(dir, 'assets'), {
      immutable: true,
      maxAge: '365d',
      index: false,
      redirect: false,
      fallthrough: true,
    }),
  );
  // A missing asset is a 404, never the page: a stale hashed name must not be answered with HTML.
  router.get('/console/assets/{*file}', (req, res) => sendProblem(res, 'not_found', 'No such console file.', req.path));
  router.get(['/console', '/console/{*page}'], (req, res) => {
    secureHtml(res, CONSOLE_CSP);
    res.set('Cache-Control', 'no-cache').set('ETag', indexTag);
    if (noneMatchHit(req.headers['if-none-match'], indexTag)) return void res.status(304).end();
    res.type('text/html; charset=utf-8').send(index);
  });
  return router;
}
