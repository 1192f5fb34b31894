import type { RequestHandler } from 'express';
import { bearerToken } from './bearer';
import type { Db } from '@works-api/prisma';
import type { Actor } from '../domain/access';
import { authenticate, unauthenticated } from '../domain/api-keys/api-keys';
import { sameSecret } from '../domain/api-keys/secrets';
import { notFound } from '../domain/errors';

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
