import type { Request, RequestHandler } from 'express';
import { rateLimit, type Store } from 'express-rate-limit';
import { hashAnswerToken } from '../domain/recipients/tokens';
import { ProblemError } from '../domain/errors';
import { bearerToken } from './bearer';
import type { Logger } from '../observability/logger';
import { clientAddress } from './rate-limit';

export interface RecipientRateLimitOptions {
  /** Requests per minute to one answer link (page and API together). */
  perTokenPerMinute: number;
  /** Requests per minute from one client address to any answer link. */
  perAddressPerMinute: number;
  /** Where the counters live (Redis, shared by every process); in this process when absent. */
  stores?: { perToken: Store; perAddress: Store };
  logger: Logger;
  onRejected?: () => void;
}

export const RECIPIENT_RATE_LIMITS = { perTokenPerMinute: 30, perAddressPerMinute: 120 } as const;

const WINDOW_MS = 60_000;

/** The token a recipient request presents: in the page's path, or as the API's bearer token. */
function presentedToken(req: Request): string {
  const fromPath = (req.params as Record<string, string | undefined>).token;
  if (fromPath !== undefined) return fromPath;
  return bearerToken(req) ?? '';
}

/**
 * The recipient's page and operations have no API key to count against: they are limited per answer link (so a
 * leaked link cannot be hammered) and per client address (so no one can try tokens in bulk). Counters are keyed
 * by the token's hash, never the token. Like the API-key limit, a failing store lets requests pass.
 */
export function recipientRateLimits(options: RecipientRateLimitOptions): RequestHandler[] {
  const limiter = (name: string, limit: number, key: (req: Request) => string, store: Store | undefined) =>
    rateLimit({
      windowMs: WINDOW_MS,
      limit,
      standardHeaders: 'draft-8',
      legacyHeaders: false,
      identifier: name,
      ...(store && { store }),
      keyGenerator: key,
      handler: (_req, res, next) => {
        options.onRejected?.();
        next(
          new ProblemError(
            'rate_limited',
            `Too many requests ${name === 'per-token' ? 'for this link' : 'from this address'}; retry after ${String(res.getHeader('Retry-After'))} seconds.`,
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
  return [
    limiter('per-address', options.perAddressPerMinute, clientAddress, options.stores?.perAddress),
    limiter(
      'per-token',
      options.perTokenPerMinute,
      (req) => hashAnswerToken(presentedToken(req)),
      options.stores?.perToken,
    ),
  ];
}
