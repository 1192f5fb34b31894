import type { Request, Response } from 'express';
import type { Logger } from '../observability/logger';

/** The route template of a request, e.g. `/v1/tenants/{tenant_id}`, or null for a path no route serves. */
export type RouteOf = (req: Request) => string | null;

/**
 * One line per request when its response is done (or the client went away): method, route template (never the
 * raw URL, which holds ids and query strings), status, duration, request id and caller. Headers and bodies are
 * never logged.
 */
export function accessLog(logger: Logger, routeOf: RouteOf): (req: Request, res: Response) => void {
  return (req, res) => {
    const started = performance.now();
    res.once('close', () => {
      logger.info(
        {
          reqId: req.id,
          method: req.method,
          route: routeOf(req),
          status: res.statusCode,
          ms: Math.round((performance.now() - started) * 10) / 10,
          userId: req.actor?.userId ?? null,
          ...(!res.writableFinished && { aborted: true }),
        },
        'request',
      );
    });
  };
}
