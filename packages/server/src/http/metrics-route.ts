import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import { ProblemError } from '../domain/errors';
import type { Logger } from '../observability/logger';
import { bearerToken } from './bearer';
import { sendProblem } from './problems';
import type { FailedAuthentications } from './rate-limit';

export const METRICS_PATH = '/metrics';

/**
 * GET /metrics for Prometheus: only with `Authorization: Bearer <METRICS_TOKEN>` (compared in constant time);
 * 401 otherwise. Outside `/v1` and the contract, like the health probes: no API key, no per-user rate limit; its
 * failures count toward the client address's budget of failed authentications (`failures`), and only failures
 * are refused: the right token passes whatever its address's count, as a valid API key does.
 */
export function metricsRoute(
  token: string,
  scrape: () => Promise<{ text: string; contentType: string }>,
  logger: Logger,
  failures?: Pick<FailedAuthentications, 'failed'>,
): RequestHandler {
  const expected = digest(token);
  return (req, res, next) => {
    if (req.path !== METRICS_PATH) return next();
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', 'GET, HEAD');
      return sendProblem(res, 'method_not_allowed', 'Use GET for the metrics.', req.path);
    }
    const presented = bearerToken(req);
    if (presented === undefined || !timingSafeEqual(digest(presented), expected)) {
      const unauthenticated = new ProblemError('unauthenticated', 'Send the METRICS_TOKEN as a Bearer token.');
      if (!failures) return next(unauthenticated);
      return void failures.failed(req, res, unauthenticated).then(next, next);
    }
    scrape().then(
      ({ text, contentType }) => {
        res.setHeader('Content-Type', contentType);
        res.setHeader('Cache-Control', 'no-store');
        res.end(text);
      },
      (error: unknown) => {
        logger.error({ err: error }, 'metrics: the scrape failed');
        sendProblem(res, 'not_ready', 'The metrics could not be collected; try again.', req.path);
      },
    );
  };
}

/** Same-length digests, so the comparison takes the same time whatever was presented. */
const digest = (value: string): Buffer => createHash('sha256').update(value).digest();
