import type { ErrorRequestHandler, RequestHandler, Response } from 'express';
import { type FieldError, ProblemError, type ProblemCode, type ProblemExtensions, problemCodes } from '../domain/errors';

/** Problem details (RFC 9457) for every error, whoever raised it: our domain, the validator or the body parser. */
export const PROBLEM_CONTENT_TYPE = 'application/problem+json';
const PROBLEM_TYPE_BASE = 'https://works-api.dev/problems/';

export function sendProblem(
  res: Response,
  code: ProblemCode,
  detail: string,
  instance: string,
  extensions: ProblemExtensions = {},
): void {
  const { status, title } = problemCodes[code];
  if (code === 'unauthenticated') res.setHeader('WWW-Authenticate', 'Bearer realm="works-api"');
  res
    .status(status)
    .type(PROBLEM_CONTENT_TYPE)
    .send(JSON.stringify({ type: PROBLEM_TYPE_BASE + code, title, status, detail, instance, code, ...extensions }));
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
}

/** Maps an error raised by express.json() or express-openapi-validator to one of our problem codes. */
function classify(error: HttpLikeError): { code: ProblemCode; detail: string; errors?: FieldError[] } | undefined {
  if (error.type === 'entity.parse.failed') return { code: 'malformed_json', detail: 'The body is not valid JSON.' };
  if (error.type === 'entity.too.large') return { code: 'payload_too_large', detail: 'The body is over 65536 bytes.' };
  if (error.type === 'charset.unsupported' || error.type === 'encoding.unsupported') {
    return { code: 'unsupported_media_type', detail: 'Send the body as UTF-8 application/json.' };
  }
  switch (error.status ?? error.statusCode) {
    case 400:
      return {
        code: 'validation_failed',
        detail: 'The request does not match the API contract.',
        errors: (error.errors ?? []).map((e) => ({ path: e.path ?? '', message: e.message ?? 'is invalid' })),
      };
    case 404:
      return { code: 'not_found', detail: 'No such route.' };
    case 405:
      return { code: 'method_not_allowed', detail: 'This route does not support that method.' };
    case 413:
      return { code: 'payload_too_large', detail: 'The body is over 65536 bytes.' };
    case 415:
      return { code: 'unsupported_media_type', detail: 'Send the body as application/json.' };
    default:
      return undefined;
  }
}

export function problemHandler(onBug: (error: unknown, req: Parameters<ErrorRequestHandler>[1]) => void): ErrorRequestHandler {
  return (error: unknown, req, res, next) => {
    if (res.headersSent) return next(error);
    const instance = req.originalUrl.split('?')[0] ?? req.path;
    if (error instanceof ProblemError) return sendProblem(res, error.code, error.detail, instance, error.extensions);
    const known = typeof error === 'object' && error !== null ? classify(error as HttpLikeError) : undefined;
    if (known) {
      return sendProblem(res, known.code, known.detail, instance, known.errors ? { errors: known.errors } : {});
    }
    onBug(error, req);
    sendProblem(res, 'internal_error', 'Something went wrong on our side.', instance, { requestId: req.id });
  };
}
