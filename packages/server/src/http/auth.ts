import type { RequestHandler } from 'express';
import { bearerToken } from './bearer';
import type { Db } from '@works-api/prisma';
import type { Actor } from '../domain/access';
import { authenticate, unauthenticated } from '../domain/api-keys/api-keys';
import { sameSecret } from '../domain/api-keys/secrets';
import { notFound, ProblemError } from '../domain/errors';
import { authenticateSession, type SessionPolicy } from '../domain/sessions/sessions';
import {
  changesSomething,
  clearSessionCookie,
  type CookieSettings,
  isSameOrigin,
  presentedSessionCookie,
} from './session-cookie';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      /** Set by `requireApiKey` for every operation authenticated with an API key. */
      actor?: Actor;
      /** Set by `requireRecipientToken` on the recipient's operations: the presented answer token. */
      recipientToken?: string;
    }
  }
}

/**
 * Authentication runs before the body is parsed or validated: a caller without a valid key learns nothing
 * about the contract, and costs us no parsing.
 */
export function requireApiKey(db: Db): RequestHandler {
  return async (req, _res, next) => {
    req.actor = await authenticate(db, bearerToken(req));
    next();
  };
}

export interface CallerOptions {
  cookies: CookieSettings;
  sessions: Pick<SessionPolicy, 'idleTimeoutMs'>;
}

/**
 * Every `/v1` operation of a user: a session cookie (the console) or a Bearer API key (integrations), never both.
 * A request without the cookie takes exactly the API-key path it always took. With the cookie: an Authorization
 * header as well is 400 (one credential, so that no one wonders which one acted); a request that changes something
 * must come from this service's own pages (Sec-Fetch-Site, or Origin: see session-cookie.ts), or the cookie does
 * not authenticate it (401); a session that has ended, or that this deployment never made, is 401 and its cookie
 * is cleared.
 */
export function requireCaller(db: Db, options: CallerOptions): RequestHandler {
  return async (req, res, next) => {
    const cookie = presentedSessionCookie(req, options.cookies);
    if (cookie === undefined) {
      req.actor = await authenticate(db, bearerToken(req));
      return next();
    }
    if (req.headers.authorization !== undefined)
      throw new ProblemError(
        'validation_failed',
        'Send one credential: a session cookie or an Authorization header, not both.',
        {
          errors: [{ path: '/headers/authorization', message: 'Authorization must not be sent with a session cookie' }],
        },
      );
    if (changesSomething(req) && !isSameOrigin(req, options.cookies, false))
      throw unauthenticated(
        'A session cookie does not authenticate a request that changes something unless it comes from the pages of this service (this one came from another site, or said nothing of where it came from).',
      );
    try {
      req.actor = await authenticateSession(db, cookie, options.sessions);
    } catch (error) {
      clearSessionCookie(req, res, options.cookies);
      throw error;
    }
    next();
  };
}

/**
 * Signing in (POST /sessions/email, POST /sessions) needs no credential, but a browser must send it from this
 * service's own pages: another site could otherwise sign a visitor in to the attacker's account (login CSRF). A
 * request without any browser header (curl, a script) passes.
 */
export function requireOwnPages(cookies: CookieSettings): RequestHandler {
  return (req, _res, next) => {
    if (!isSameOrigin(req, cookies, true))
      throw new ProblemError(
        'cross_site_request',
        'Only the pages of this service may sign in: this request came from another site.',
      );
    next();
  };
}

/** Operator routes: enabled by ADMIN_TOKEN; without it they do not exist (404). */
export function requireAdminToken(adminToken: string | undefined): RequestHandler {
  return (req, _res, next) => {
    if (adminToken === undefined) throw notFound('route');
    const presented = bearerToken(req);
    if (presented === undefined || !sameSecret(presented, adminToken)) {
      throw unauthenticated('The operator token is missing or wrong.');
    }
    next();
  };
}

/**
 * The recipient's operations: `Authorization: Bearer <answer token>`. Missing or not a bearer token: 401. Whether
 * the token opens a request is the domain's question (404 when it does not, like any id that names nothing).
 */
export function requireRecipientToken(): RequestHandler {
  return (req, _res, next) => {
    const presented = bearerToken(req);
    if (presented === undefined) throw unauthenticated('The answer token from the emailed link is required.');
    req.recipientToken = presented;
    next();
  };
}
