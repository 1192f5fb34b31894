import type { Request } from 'express';
import type { RouteOf } from '../http/access-log';
import type { RequestLabels } from './tracing';

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
