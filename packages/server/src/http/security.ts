import cors from 'cors';
import type { RequestHandler } from 'express';
import helmet from 'helmet';

/**
 * Security headers for a JSON API (helmet): nothing on our responses may be framed, sniffed or run as a
 * document. Pages served by this app (e.g. rendered docs) set their own Content-Security-Policy. Every response
 * under `noStoreUnder` (the API's base path), errors included, says `Cache-Control: no-store`: no cache on the way
 * may keep one (some show a secret once, all hold a user's or a tenant's data). In the same layer as helmet's
 * headers: every Express layer costs each request a few microseconds.
 */
export function securityHeaders({ noStoreUnder }: { noStoreUnder?: string } = {}): RequestHandler {
  const headers = helmet({
    contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
    xFrameOptions: { action: 'deny' },
  });
  return (req, res, next) => {
    const under = noStoreUnder !== undefined && (req.path === noStoreUnder || req.path.startsWith(`${noStoreUnder}/`));
    if (under) res.setHeader('Cache-Control', 'no-store');
    headers(req, res, next);
  };
}

/** What a browser frontend may send and read across origins. */
const ALLOWED_REQUEST_HEADERS = [
  'Authorization',
  'Content-Type',
  'Idempotency-Key',
  'If-Match',
  'If-None-Match',
  'X-Request-Id',
];
const EXPOSED_RESPONSE_HEADERS = [
  'ETag',
  'Location',
  'Idempotent-Replayed',
  'RateLimit',
  'RateLimit-Policy',
  'Retry-After',
  'WWW-Authenticate',
  'X-Request-Id',
];

/**
 * CORS for browser frontends on the allow-listed origins only (exact match); other origins get no CORS headers,
 * so browsers keep them out. Keys travel in `Authorization`, never cookies: no credentials mode.
 */
export const corsFor = (origins: string[]): RequestHandler =>
  cors({
    origin: origins,
    methods: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'],
    allowedHeaders: ALLOWED_REQUEST_HEADERS,
    exposedHeaders: EXPOSED_RESPONSE_HEADERS,
    maxAge: 600,
  });
