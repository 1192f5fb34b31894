import type { Request, Response } from 'express';

/**
 * The session cookie, and where a browser's request comes from.
 *
 * Name: `__Host-works_session` whenever the service is reached over HTTPS. The `__Host-` prefix makes the browser
 * refuse the cookie unless it is `Secure`, has `Path=/` and no `Domain`: no sibling subdomain and no plain-HTTP
 * page can set or shadow it. Browsers take `__Host-` (and `Secure`) cookies only in secure contexts, so a
 * plain-HTTP development server (`http://127.0.0.1:3000`) uses `works_session` instead. Each request reads only
 * the name of its own scheme: over HTTPS a `works_session` cookie (which anyone on the network path could have
 * planted) is ignored.
 *
 * HTTPS is the request's own scheme: `req.secure`, which believes `X-Forwarded-Proto` only from a proxy that
 * TRUST_PROXY names (Express's `trust proxy`); or a PUBLIC_URL that starts with https://, for a TLS-terminating
 * proxy the service was not told to trust (it sees plain HTTP, the browser sees HTTPS).
 */
export const SECURE_COOKIE = '__Host-works_session';
export const PLAIN_COOKIE = 'works_session';

export interface CookieSettings {
  /** PUBLIC_URL starts with https:// */
  publicUrlIsHttps: boolean;
  /** The origins this service's pages are served from (the request's own is always one of them). */
  ownOrigins: readonly string[];
}

export const isSecureContext = (req: Request, settings: CookieSettings): boolean =>
  req.secure || settings.publicUrlIsHttps;

export const cookieName = (req: Request, settings: CookieSettings): string =>
  isSecureContext(req, settings) ? SECURE_COOKIE : PLAIN_COOKIE;

/**
 * The session cookie's value the request carries under its scheme's name, or undefined. Parsed by hand from the
 * Cookie header (no cookie parser per request): the first cookie of that name.
 */
export function presentedSessionCookie(req: Request, settings: CookieSettings): string | undefined {
  const header = req.headers.cookie;
  if (header === undefined || header === '') return undefined;
  const name = cookieName(req, settings);
  for (const part of header.split(';')) {
    const at = part.indexOf('=');
    if (at < 0) continue;
    if (part.slice(0, at).trim() === name) {
      const value = part.slice(at + 1).trim();
      return value === '' ? undefined : value;
    }
  }
  return undefined;
}

function cookieAttributes(req: Request, settings: CookieSettings, maxAgeSeconds: number): string {
  const secure = isSecureContext(req, settings) ? '; Secure' : '';
  return `Path=/; HttpOnly${secure}; SameSite=Lax; Max-Age=${maxAgeSeconds}`;
}

export function setSessionCookie(
  req: Request,
  res: Response,
  settings: CookieSettings,
  value: string,
  maxAgeSeconds: number,
): void {
  res.append('Set-Cookie', `${cookieName(req, settings)}=${value}; ${cookieAttributes(req, settings, maxAgeSeconds)}`);
}

export function clearSessionCookie(req: Request, res: Response, settings: CookieSettings): void {
  res.append('Set-Cookie', `${cookieName(req, settings)}=; ${cookieAttributes(req, settings, 0)}`);
}

const UNSAFE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
export const changesSomething = (req: Request): boolean => UNSAFE_METHODS.has(req.method);

/** This request's own origin, as the browser that sent it would write it. */
const ownOrigin = (req: Request): string | undefined => {
  const host = req.headers.host;
  return host === undefined ? undefined : `${req.protocol}://${host}`;
};

/**
 * Whether a browser sent this request from one of this service's own pages. Fetch Metadata first: a browser that
 * sends `Sec-Fetch-Site` (every current one) says `same-origin` for our pages (`none` is a person typing an
 * address, which cannot make a POST). Without it, `Origin` (sent by browsers on every POST, PUT, PATCH and DELETE)
 * must be ours. With neither, it is no browser's cross-site request: `noBrowserHeaders` says what to answer then.
 */
export function isSameOrigin(req: Request, settings: CookieSettings, noBrowserHeaders: boolean): boolean {
  const site = req.headers['sec-fetch-site'];
  if (typeof site === 'string') return site === 'same-origin';
  const origin = req.headers.origin;
  if (typeof origin !== 'string') return noBrowserHeaders;
  return origin === ownOrigin(req) || settings.ownOrigins.includes(origin);
}
