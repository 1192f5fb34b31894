import cors from 'cors';
import type { RequestHandler } from 'express';
import helmet from 'helmet';

/**
 * Security headers for a JSON API (helmet): nothing on our responses may be framed, sniffed or run as a
 * document. Pages served by this app (e.g. rendered docs) set their own Content-Security-Policy.
 */
export const securityHeaders = (): RequestHandler =>
  helmet({
    contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
    xFrameOptions: { action: 'deny' },
  });

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
