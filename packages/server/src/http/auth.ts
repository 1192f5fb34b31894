import type { Request, RequestHandler } from 'express';
import { bearerToken } from './bearer';
import type { Db } from '@works-api/prisma';
import { type Actor, holdsScope, reachesTenant } from '../domain/access';
import { authenticate, unauthenticated } from '../domain/api-keys/api-keys';
import { sameSecret } from '../domain/api-keys/secrets';
import { notFound, ProblemError } from '../domain/errors';
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
    requireScope(req.actor, req.operation);
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
