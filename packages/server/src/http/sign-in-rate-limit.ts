import type { RequestHandler } from 'express';
import { rateLimit, type Store } from 'express-rate-limit';
import { ProblemError } from '../domain/errors';
import type { Logger } from '../observability/logger';
import { clientAddress } from './rate-limit';

const WINDOW_MS = 3_600_000;

/**
 * Signing in has no user to count against: its requests (emails asked for, links and codes tried) are counted per
 * client address, SIGN_IN_REQUESTS_PER_CLIENT_PER_HOUR (0: off), so that no one address can bomb many mailboxes or
 * try codes in bulk. The per-address cap on emails is the domain's (one statement with the email). Like the other
 * limits, a failing store lets requests pass.
 */
export function signInRateLimit(options: {
  perHour: number;
  store?: Store;
  logger: Logger;
  onRejected?: () => void;
}): RequestHandler {
  if (options.perHour <= 0) return (_req, _res, next) => next();
  return rateLimit({
    windowMs: WINDOW_MS,
    limit: options.perHour,
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    identifier: 'sign-in',
    ...(options.store && { store: options.store }),
    keyGenerator: clientAddress,
    handler: (_req, res, next) => {
      options.onRejected?.();
      next(
        new ProblemError(
          'rate_limited',
          `Too many sign-in requests from this address; retry after ${String(res.getHeader('Retry-After'))} seconds.`,
        ),
      );
    },
    passOnStoreError: true,
    logger: {
      error: (error, message) => options.logger.error({ err: error }, message),
      warn: (message) => options.logger.warn(message),
    },
    validate: { ip: false, trustProxy: false, xForwardedForHeader: false, keyGeneratorIpFallback: false },
  });
}
