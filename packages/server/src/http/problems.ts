import type { ErrorRequestHandler, Request, RequestHandler, Response } from 'express';
import {
  isDatabaseOutage,
  isStatementTimeout,
  OUTAGE_RETRY_AFTER_SECONDS,
  outageDetail,
  type OutageMonitor,
} from '@works-api/prisma';
import { KeyHoldLost } from '@works-api/prisma';
import {
  type FieldError,
  ProblemError,
  type ProblemExtensions,
  isProblemCode,
  type ProblemCode,
  problemCodes,
} from '../domain/errors';

/** Problem details (RFC 9457) for every error, whoever raised it: our domain, the validator or the body parser. */
export const PROBLEM_CONTENT_TYPE = 'application/problem+json';
export const PROBLEM_TYPE_BASE = 'https://works-api.dev/problems/';

/** The largest request body the JSON parser reads; a larger one is 413 `payload_too_large`. */
export const MAX_BODY_BYTES = 64 * 1024;
/** A batch of requests' (createRequestBatch): 1,000 items of a few hundred bytes, with room for long messages. */
export const MAX_BATCH_BODY_BYTES = 2 * 1024 * 1024;

/** The body of a problem: its code's type, title and status, and what happened this time. */
export function problemBody(code: ProblemCode, detail: string, instance: string, extensions: ProblemExtensions = {}) {
  const { status, title } = problemCodes[code];
  return { type: PROBLEM_TYPE_BASE + code, title, status, detail, instance, code, ...extensions };
}

export function sendProblem(
  res: Response,
  code: ProblemCode,
  detail: string,
  instance: string,
  extensions: ProblemExtensions = {},
): void {
  if (code === 'unauthenticated') res.setHeader('WWW-Authenticate', 'Bearer realm="works-api"');
  // RFC 6750, section 3.1: the scope the request needed (scopes are `[a-z:]` words: nothing to quote).
  if (code === 'insufficient_scope' && extensions.scope !== undefined)
    res.setHeader('WWW-Authenticate', `Bearer error="insufficient_scope", scope="${extensions.scope}"`);
  const body = problemBody(code, detail, instance, extensions);
  (res.app.locals as ProblemLocals).checkProblem?.(res.req, body);
  res.status(body.status).type(PROBLEM_CONTENT_TYPE).send(JSON.stringify(body));
}

/** Set by the app when it validates responses (tests): sees every problem before it is sent. */
export interface ProblemLocals {
  checkProblem?: (req: Request, body: { status: number; code: string }) => void;
}

/** Unknown routes outside the contract's base path. */
export const notFoundHandler: RequestHandler = (req, res) => {
  sendProblem(res, 'not_found', `No route for ${req.method} ${req.path}.`, req.path);
};

interface HttpLikeError {
  status?: number;
  statusCode?: number;
  type?: string;
  message?: string;
  errors?: Array<{ path?: string; message?: string }>;
  /** express.json()'s 413 carries the limit it applied. */
  limit?: number;
  /** express-openapi-validator's 405 carries `Allow` (the path's methods, in lower case). */
  headers?: { Allow?: string };
}

interface Classified {
  code: ProblemCode;
  detail: string;
  errors?: FieldError[];
  /** RFC 9110: a 405 lists the methods the path does allow. */
  allow?: string;
}

const tooLarge = (limit = MAX_BODY_BYTES): Classified => ({
  code: 'payload_too_large',
  detail: `The body is over ${limit} bytes.`,
});

/** Maps an error raised by express.json() or express-openapi-validator to one of our problem codes. */
function classify(error: HttpLikeError): Classified | undefined {
  if (error.type === 'entity.parse.failed') return { code: 'malformed_json', detail: 'The body is not valid JSON.' };
  if (error.type === 'entity.too.large') return tooLarge(error.limit);
  if (error.type === 'charset.unsupported' || error.type === 'encoding.unsupported') {
    return { code: 'unsupported_media_type', detail: 'Send the body as UTF-8 application/json.' };
  }
  switch (error.status ?? error.statusCode) {
    case 400:
      return {
        code: 'validation_failed',
        detail: 'The request does not match the API contract.',
        errors: (error.errors ?? [])
          .slice(0, MAX_LISTED_ERRORS)
          .map((e) => ({ path: e.path ?? '', message: e.message ?? 'is invalid' })),
      };
    case 404:
      return { code: 'not_found', detail: 'No such route.' };
    case 405: {
      const allow = (error.headers?.Allow ?? '')
        .split(',')
        .map((method) => method.trim().toUpperCase())
        .filter(Boolean)
        .join(', ');
      return { code: 'method_not_allowed', detail: `This route allows ${allow || 'no method'}.`, allow };
    }
    case 413:
      return tooLarge();
    case 415:
      return { code: 'unsupported_media_type', detail: 'Send the body as application/json.' };
    default:
      return undefined;
  }
}

/** The contract lists at most this many `errors` (a batch of 1,000 bad items names the first 100). */
const MAX_LISTED_ERRORS = 100;

/**
 * The last error handler: our domain's problems, the body parser's and validator's errors, a database outage
 * (503 with Retry-After, logged once per outage by `outage`), a statement cut off by the statement timeout (503
 * too, logged by `onSlowStatement`), and anything else, which is a bug (500).
 */
export function problemHandler(
  outage: OutageMonitor,
  onBug: (error: unknown, req: Parameters<ErrorRequestHandler>[1]) => void,
  onSlowStatement: (error: unknown, req: Parameters<ErrorRequestHandler>[1]) => void = () => undefined,
): ErrorRequestHandler {
  return (error: unknown, req, res, next) => {
    if (res.headersSent) return next(error);
    const instance = req.originalUrl.split('?')[0] ?? req.path;
    if (error instanceof KeyHoldLost)
      return sendProblem(res, 'idempotency_key_in_use', 'This Idempotency-Key was taken over by a retry.', instance);
    const problem = error instanceof ProblemError ? (error as ProblemError<string>) : undefined;
    if (problem && isProblemCode(problem.code)) {
      if (problem.retryAfterSeconds !== undefined) res.setHeader('Retry-After', String(problem.retryAfterSeconds));
      return sendProblem(res, problem.code, problem.detail, instance, problem.extensions);
    }
    const known = typeof error === 'object' && error !== null ? classify(error) : undefined;
    if (known) {
      if (known.allow !== undefined) res.setHeader('Allow', known.allow);
      return sendProblem(
        res,
        known.code,
        known.detail,
        instance,
        known.errors ? { errors: known.errors.slice(0, MAX_LISTED_ERRORS) } : {},
      );
    }
    const unavailable = () => {
      outage.report(error);
      res.setHeader('Retry-After', String(OUTAGE_RETRY_AFTER_SECONDS));
      sendProblem(res, 'service_unavailable', outageDetail(error), instance);
    };
    const bug = () => {
      onBug(error, req);
      sendProblem(res, 'internal_error', 'Something went wrong on our side.', instance, { requestId: req.id });
    };
    if (isStatementTimeout(error) && !isDatabaseOutage(error)) {
      // Reachable but too slow for now (the pool's statement timeout cut it off): the same 503, not an outage.
      onSlowStatement(error, req);
      res.setHeader('Retry-After', String(OUTAGE_RETRY_AFTER_SECONDS));
      return sendProblem(
        res,
        'service_unavailable',
        `The database did not answer in time; nothing was changed. Retry after ${OUTAGE_RETRY_AFTER_SECONDS} seconds.`,
        instance,
      );
    }
    void outage.explains(error).then((down) => (down ? unavailable() : bug()));
  };
}
