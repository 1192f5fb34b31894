/**
 * Every error the service answers with, in one table: the closed set of codes the contract declares, each with
 * the HTTP status it maps to and a title; clients switch on the `code`. Domain code throws `ProblemError`s with
 * the first group and knows nothing of Express; the transport (the body parser, the router, the limiters, the
 * idempotency store, a bug) raises the second.
 */
export const problemCodes = {
  // Raised by the domain.
  validation_failed: { status: 400, title: 'Invalid request' },
  invalid_cursor: { status: 400, title: 'Invalid cursor' },
  webhook_url_not_allowed: { status: 400, title: 'Webhook URL not allowed' },
  invalid_sign_in: { status: 400, title: 'Invalid sign-in link' },
  names_required: { status: 400, title: 'Names required' },
  sign_up_not_allowed: { status: 403, title: 'Sign-up not allowed' },
  cross_site_request: { status: 403, title: 'Cross-site request' },
  sign_in_expired: { status: 410, title: 'Sign-in link expired' },
  sign_in_used: { status: 410, title: 'Sign-in link used' },
  sign_in_limit_reached: { status: 429, title: 'Too many sign-in emails' },
  unauthenticated: { status: 401, title: 'Unauthenticated' },
  forbidden: { status: 403, title: 'Forbidden' },
  insufficient_scope: { status: 403, title: 'Insufficient scope' },
  not_found: { status: 404, title: 'Not found' },
  invalid_transition: { status: 409, title: 'Conflict' },
  work_discarded: { status: 409, title: 'Conflict' },
  last_owner: { status: 409, title: 'Conflict' },
  already_member: { status: 409, title: 'Conflict' },
  already_invited: { status: 409, title: 'Conflict' },
  email_taken: { status: 409, title: 'Conflict' },
  api_key_limit_reached: { status: 409, title: 'Conflict' },
  tenant_limit_reached: { status: 409, title: 'Conflict' },
  webhook_endpoint_limit_reached: { status: 409, title: 'Conflict' },
  invitation_limit_reached: { status: 409, title: 'Conflict' },
  resend_limit_reached: { status: 409, title: 'Conflict' },
  precondition_failed: { status: 412, title: 'Precondition failed' },
  recipient_email_limit_reached: { status: 429, title: 'Too many emails' },
  tenant_email_budget_exhausted: { status: 429, title: 'Too many emails' },
  address_email_limit_reached: { status: 429, title: 'Too many emails' },
  sender_email_budget_exhausted: { status: 429, title: 'Too many emails' },
  resend_too_soon: { status: 429, title: 'Too many emails' },
  // Raised only by the transport.
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
} as const satisfies Record<string, { status: number; title: string }>;

export type ProblemCode = keyof typeof problemCodes;

export const isProblemCode = (code: string): code is ProblemCode => Object.hasOwn(problemCodes, code);

export interface FieldError {
  path: string;
  message: string;
}

/** Extra members of a problem body (RFC 9457 allows extensions). */
export interface ProblemExtensions {
  errors?: FieldError[];
  currentStatus?: string;
  allowedActions?: string[];
  /** On `insufficient_scope`: the scope the operation needs. */
  scope?: string;
  /** On 500s: the request id, to quote when reporting the problem. */
  requestId?: string;
}

/** An error to answer with a problem body: the domain and the HTTP layer raise them, and one handler sends them all. */
export class ProblemError<Code extends string = ProblemCode> extends Error {
  constructor(
    readonly code: Code,
    readonly detail: string,
    readonly extensions: ProblemExtensions = {},
    /** Sent as `Retry-After` (whole seconds): when the refusal ends (a 429 of a cap). */
    readonly retryAfterSeconds?: number,
  ) {
    super(detail);
    this.name = 'ProblemError';
  }
}

export const notFound = (what: string): ProblemError => new ProblemError('not_found', `No ${what} with this id.`);
