import type { Request, RequestHandler } from 'express';
import { bearerToken } from './bearer';
import type { Db } from '@works-api/prisma';
import { type Actor, holdsScope, reachesTenant } from '../domain/access';
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
import type { SpecOperation } from './spec';

/**
 * The auth context every handler gets (`req.actor`): who (`userId`, `user`), through what (`via`: an API key or a
 * session, `credentialId`), and how far (`tenants`, `scopes`: null for no limit; a session has none). Defined in
 * domain/access.ts, where the permission checks use it.
 */
export type { Actor } from '../domain/access';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      /** Set by `requireCaller` for every operation of a user (an API key or a session cookie). */
      actor?: Actor;
      /** Set by `requireRecipientToken` on the recipient's operations: the presented answer token. */
      recipientToken?: string;
    }
  }
}

export interface CallerOptions {
  cookies: CookieSettings;
  sessions: Pick<SessionPolicy, 'idleTimeoutMs'>;
}

/**
 * Authentication runs before the body is parsed or validated: a caller without a valid credential learns nothing
 * about the contract, and costs us no parsing.
 *
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
      requireScope(req.actor, req.operation);
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
    // A session holds every scope (tenants and scopes null): the same check as a key's, so that there is one path.
    requireScope(req.actor, req.operation);
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

/**
 * The credential must hold the scope the operation names in the contract (`x-required-scope`, read into
 * `operation.requiredScope`): otherwise 403 insufficient_scope naming it (and, in `WWW-Authenticate`, RFC 6750).
 * Runs right after authentication, before the body is read. An unrestricted credential holds every scope.
 */
export function requireScope(actor: Actor, operation: Pick<SpecOperation, 'requiredScope'> | undefined): void {
  const scope = operation?.requiredScope;
  if (scope === undefined || holdsScope(actor, scope)) return;
  throw new ProblemError('insufficient_scope', `This API key does not have the ${scope} scope.`, { scope });
}

/**
 * A credential limited to some tenants sees every other tenant as not found, exactly as a non-member does: for
 * every operation whose path names a tenant, after validation and before anything else of the operation.
 */
export function requireTenantReach(): RequestHandler {
  return (req, _res, next) => {
    assertTenantReach(req);
    next();
  };
}

/** `requireTenantReach`'s check, for a route that makes it inside its own layer. */
export function assertTenantReach(req: Pick<Request, 'actor' | 'params'>): void {
  const tenantId = (req.params as Record<string, unknown>).tenant_id;
  if (req.actor && typeof tenantId === 'string' && !reachesTenant(req.actor, tenantId.toLowerCase()))
    throw notFound('tenant');
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
