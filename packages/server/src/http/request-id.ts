import { randomUUID } from 'node:crypto';
import type { Request, Response } from 'express';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      /** This request's id: the caller's valid `X-Request-Id`, or a new UUID. */
      id: string;
    }
  }
}

/** What we accept from a caller: short, and nothing that could forge a log line or a header. */
const VALID_REQUEST_ID = /^[A-Za-z0-9][A-Za-z0-9._:+=/@-]{0,127}$/;

export const REQUEST_ID_HEADER = 'X-Request-Id';

/**
 * Gives the request an id and the response the `X-Request-Id` header, first thing, so that even a response from
 * a later failing middleware carries it. A valid incoming id is kept, so a caller can follow one operation
 * across services; anything else is replaced. (Called from app.ts's first middleware: every Express layer
 * costs, so the per-request basics share one.)
 */
export function assignRequestId(req: Request, res: Response): void {
  const incoming = req.headers['x-request-id'];
  req.id = typeof incoming === 'string' && VALID_REQUEST_ID.test(incoming) ? incoming : randomUUID();
  res.setHeader(REQUEST_ID_HEADER, req.id);
}
