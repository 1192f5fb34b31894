import type { RequestHandler } from 'express';
import { isDatabaseReadOnly } from '@works-api/prisma';
import type { Lifecycle } from './graceful-shutdown';
import { sendProblem } from './problems';

export const HEALTH_PATHS = ['/healthz', '/readyz'] as const;

/** How long readiness waits for the database before calling it unreachable. */
const READY_TIMEOUT_MS = 2_000;

/**
 * Probes for load balancers and orchestrators, outside `/v1`, without authentication or rate limits:
 * `/healthz` says the process serves HTTP; `/readyz` says it can do useful work (the database answers and takes
 * writes, and it is not shutting down). One plain middleware rather than a Router: it runs for every request, so it must cost
 * next to nothing when the path is not a probe.
 */
export function healthRoutes(ping: () => Promise<void>, lifecycle: Lifecycle): RequestHandler {
  return async (req, res, next) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return next();
    if (req.path === '/healthz') return void res.json({ status: 'ok' });
    if (req.path !== '/readyz') return next();
    if (lifecycle.draining) return sendProblem(res, 'not_ready', 'The server is shutting down.', req.path);
    try {
      await withTimeout(ping(), READY_TIMEOUT_MS);
    } catch (error) {
      const why = isDatabaseReadOnly(error)
        ? 'The database takes no writes (a standby: a failover is under way).'
        : 'The database is unreachable.';
      return sendProblem(res, 'not_ready', why, req.path);
    }
    res.json({ status: 'ready' });
  };
}

function withTimeout(work: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  work.catch(() => undefined); // a late failure after the timeout must not become an unhandled rejection
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}
