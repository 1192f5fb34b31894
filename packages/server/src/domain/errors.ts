/**
 * The errors the domain raises, in one table: a stable `code` for clients to switch on, the HTTP status it maps
 * to, and a title. Domain code throws `ProblemError`s and knows nothing of Express; the codes only the transport
 * raises (a malformed body, a rate limit, an unknown method...) are http/problem-codes.ts's.
 */
export const domainProblemCodes = {
  validation_failed: { status: 400, title: 'Invalid request' },
  invalid_cursor: { status: 400, title: 'Invalid cursor' },
  webhook_url_not_allowed: { status: 400, title: 'Webhook URL not allowed' },
  unauthenticated: { status: 401, title: 'Unauthenticated' },
  forbidden: { status: 403, title: 'Forbidden' },
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
  resend_too_soon: { status: 429, title: 'Too many emails' },
} as const satisfies ProblemTable;

/** Problem codes with their HTTP status and title. */
export type ProblemTable = Record<string, { status: number; title: string }>;

export type DomainProblemCode = keyof typeof domainProblemCodes;

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

/**
 * An error to answer with a problem body. The domain raises its own codes; the HTTP layer raises its codes
 * through the same class (`Code` widened), so that one handler sends them all.
 */
export class ProblemError<Code extends string = DomainProblemCode> extends Error {
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
