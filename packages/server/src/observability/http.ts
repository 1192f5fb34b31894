import { createHash, timingSafeEqual } from 'node:crypto';
import type { Request, RequestHandler } from 'express';
import { bearerToken } from '../http/bearer';
import type { Logger } from './logger';
import { sendProblem } from '../http/problems';
import type { RouteOf } from '../http/access-log';
import type { RequestLabels } from './tracing';
import { ProblemError } from '../domain/errors';
import type { FailedAuthentications } from '../http/rate-limit';

export const METRICS_PATH = '/metrics';

/** The operations outside the contract, by path, named for metrics and traces (a bounded set of labels). */
const FIXED_OPERATIONS: ReadonlyArray<[RegExp, string]> = [
  [/^\/healthz$/, 'healthz'],
  [/^\/readyz$/, 'readyz'],
  [/^\/metrics$/, 'metrics'],
  [/^\/openapi\.yaml$/, 'openapi.yaml'],
  [/^\/docs(\/|$)/, 'docs'],
  [/^\/console(\/|$)/, 'console'],
];

/** Requests no operation serves (unknown paths, refused methods): one label, so made-up URLs add no series. */
export const UNMATCHED = 'unmatched';

/**
 * A request's operation and route template, for metrics and span names: the contract's operationId (found at the
 * edge, so also for requests refused before validation: 401, 429), a fixed name for the
 * routes outside `/v1`, else `unmatched`. Never the raw path, which holds ids.
 */
export function requestLabeler(routeOf: RouteOf): (req: Request) => RequestLabels {
  return (req) => {
    const operation =
      req.operation?.operationId ??
      FIXED_OPERATIONS.find(([pattern]) => pattern.test(req.originalUrl.split('?')[0]!))?.[1] ??
      UNMATCHED;
    return { operation, route: routeOf(req) };
  };
}

/**
 * GET /metrics for Prometheus: only with `Authorization: Bearer <METRICS_TOKEN>` (compared in constant time);
 * 401 otherwise. Outside `/v1` and the contract, like the health probes: no API key, no per-user rate limit; its
 * failures count toward the client address's budget of failed authentications (`failures`), and while that
 * address is over it even the right token waits, so the token cannot be guessed at speed.
 */
export function metricsRoute(
  token: string,
  scrape: () => Promise<{ text: string; contentType: string }>,
  logger: Logger,
  failures?: Pick<FailedAuthentications, 'refusal' | 'failed'>,
): RequestHandler {
  const expected = digest(token);
  return (req, res, next) => {
    if (req.path !== METRICS_PATH) return next();
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', 'GET, HEAD');
      return sendProblem(res, 'method_not_allowed', 'Use GET for the metrics.', req.path);
    }
    const refusal = failures?.refusal(req, res);
    if (refusal) return next(refusal);
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
