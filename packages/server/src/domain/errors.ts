/**
 * Every error the service can answer with, in one table: a stable `code` for clients to switch on, the HTTP
 * status it maps to, and a title. Domain code throws `ProblemError`s and knows nothing of Express.
 */
export const problemCodes = {
  validation_failed: { status: 400, title: 'Invalid request' },
  malformed_json: { status: 400, title: 'Malformed JSON' },
  malformed_request: { status: 400, title: 'Malformed request' },
  invalid_cursor: { status: 400, title: 'Invalid cursor' },
  webhook_url_not_allowed: { status: 400, title: 'Webhook URL not allowed' },
  unauthenticated: { status: 401, title: 'Unauthenticated' },
  forbidden: { status: 403, title: 'Forbidden' },
  not_found: { status: 404, title: 'Not found' },
  method_not_allowed: { status: 405, title: 'Method not allowed' },
  invalid_transition: { status: 409, title: 'Conflict' },
  work_discarded: { status: 409, title: 'Conflict' },
  last_owner: { status: 409, title: 'Conflict' },
  already_member: { status: 409, title: 'Conflict' },
  email_taken: { status: 409, title: 'Conflict' },
  api_key_limit_reached: { status: 409, title: 'Conflict' },
  tenant_limit_reached: { status: 409, title: 'Conflict' },
  webhook_endpoint_limit_reached: { status: 409, title: 'Conflict' },
  idempotency_key_in_use: { status: 409, title: 'Idempotency key in use' },
  precondition_failed: { status: 412, title: 'Precondition failed' },
  payload_too_large: { status: 413, title: 'Payload too large' },
  unsupported_media_type: { status: 415, title: 'Unsupported media type' },
  headers_too_large: { status: 431, title: 'Request header fields too large' },
  idempotency_key_reused: { status: 422, title: 'Idempotency key reused' },
  rate_limited: { status: 429, title: 'Too many requests' },
  internal_error: { status: 500, title: 'Internal server error' },
  not_ready: { status: 503, title: 'Service unavailable' },
  service_unavailable: { status: 503, title: 'Service unavailable' },
} as const satisfies Record<string, { status: number; title: string }>;

export type ProblemCode = keyof typeof problemCodes;

export interface FieldError {
  path: string;
  message: string;
}

/** Extra members of a problem body (RFC 9457 allows extensions). */
export interface ProblemExtensions {
  errors?: FieldError[];
  currentStatus?: string;
  allowedActions?: string[];
  /** On 500s: the request id, to quote when reporting the problem. */
  requestId?: string;
}

export class ProblemError extends Error {
  readonly status: number;

  constructor(
    readonly code: ProblemCode,
    readonly detail: string,
    readonly extensions: ProblemExtensions = {},
  ) {
    super(detail);
    this.name = 'ProblemError';
    this.status = problemCodes[code].status;
  }
}

export const notFound = (what: string): ProblemError => new ProblemError('not_found', `No ${what} with this id.`);
