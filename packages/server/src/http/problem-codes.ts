import { domainProblemCodes, ProblemError, type ProblemExtensions, type ProblemTable } from '../domain/errors';

/** The codes only the transport raises: what the body parser, the router, the limiters and a bug answer with. */
const transportProblemCodes = {
  malformed_json: { status: 400, title: 'Malformed JSON' },
  malformed_request: { status: 400, title: 'Malformed request' },
  method_not_allowed: { status: 405, title: 'Method not allowed' },
  idempotency_key_in_use: { status: 409, title: 'Idempotency key in use' },
  payload_too_large: { status: 413, title: 'Payload too large' },
  unsupported_media_type: { status: 415, title: 'Unsupported media type' },
  idempotency_key_reused: { status: 422, title: 'Idempotency key reused' },
  rate_limited: { status: 429, title: 'Too many requests' },
  headers_too_large: { status: 431, title: 'Request header fields too large' },
  internal_error: { status: 500, title: 'Internal server error' },
  not_ready: { status: 503, title: 'Service unavailable' },
  service_unavailable: { status: 503, title: 'Service unavailable' },
} as const satisfies ProblemTable;

/** Every error the service can answer with: the closed set of codes the contract declares. */
export const problemCodes = { ...domainProblemCodes, ...transportProblemCodes } as const satisfies ProblemTable;

export type ProblemCode = keyof typeof problemCodes;

export const isProblemCode = (code: string): code is ProblemCode => Object.hasOwn(problemCodes, code);

/** A problem the HTTP layer raises (a limiter, the idempotency store, the body check). */
export const httpProblem = (code: ProblemCode, detail: string, extensions?: ProblemExtensions) =>
  new ProblemError<ProblemCode>(code, detail, extensions);
