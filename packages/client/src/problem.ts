import type { FetchResponse, Middleware } from 'openapi-fetch';
import type { components, operations } from '@works-api/api-types';

/**
 * The shape every error shares: RFC 9457 problem details with a stable snake_case `code`. An operation's own
 * error type is narrower (`OperationProblem<'getWork'>`): the union of the problem types it declares.
 */
export type Problem = components['schemas']['Problem'];

/** What an API key may do, per resource (`scopes` lists them; `requiredScopes` says which each operation needs). */
export type Scope = components['schemas']['Scope'];

/**
 * `403 insufficient_scope`: the API key lacks the scope the operation needs, named in `scope` (and in the response's
 * `WWW-Authenticate: Bearer error="insufficient_scope", scope="…"`). Only restricted keys get it.
 */
export type InsufficientScopeProblem = components['schemas']['InsufficientScopeProblem'];

/** True for an `insufficient_scope` problem, from any operation (narrows to read its `scope`). */
export const isInsufficientScope = (value: unknown): value is InsufficientScopeProblem =>
  isProblem(value) && value.code === 'insufficient_scope' && typeof (value as { scope?: unknown }).scope === 'string';

/** What the client makes of an error response that is not a problem (an HTML 502 from a proxy, an empty 503). */
export type UnexpectedResponseProblem = Problem & { code: 'unexpected_response' };

/** Every problem type the API declares (one per `code`), plus the client's `unexpected_response`. */
export type AnyProblem = DeclaredProblem | UnexpectedResponseProblem;

/** Every `code` an error can carry: a closed set, so a misspelt code does not compile. */
export type ProblemCode = AnyProblem['code'];

type DeclaredProblem = {
  [K in keyof operations]: Extract<
    FetchResponse<operations[K], object, `${string}/${string}json`>,
    { error: unknown }
  >['error'];
}[keyof operations];

const PROBLEM_TYPE = /^application\/problem\+json\b/i;

/** True for a value shaped like a Problem (an object with a numeric `status` and a string `code` and `title`). */
export function isProblem(value: unknown): value is Problem {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Record<string, unknown>;
  return (
    typeof candidate.status === 'number' && typeof candidate.code === 'string' && typeof candidate.title === 'string'
  );
}

/** A Problem as a thrown error, for code that prefers exceptions (see `unwrap`). */
export class ProblemError extends Error {
  override name = 'ProblemError';
  readonly status: number;
  readonly code: ProblemCode;

  constructor(
    readonly problem: AnyProblem,
    readonly response?: Response,
  ) {
    super(`${problem.status} ${problem.code}: ${problem.detail}`);
    this.status = problem.status;
    this.code = problem.code;
  }
}

/**
 * The data of a successful result, or a thrown `ProblemError` carrying the typed Problem.
 *
 *     const { tenant } = unwrap(await client.createTenant({ body: { name: 'Acme' } }));
 */
export function unwrap<T>(result: { data?: T; error?: unknown; response: Response }): T {
  if (result.error !== undefined || !result.response.ok) {
    // The server answers only the problems its contract declares (its tests check that every one it sends is).
    const problem = isProblem(result.error)
      ? (result.error as AnyProblem)
      : unexpectedProblem(result.response, result.error);
    throw new ProblemError(problem, result.response);
  }
  return result.data as T;
}

/**
 * Makes every error response a Problem: the API always answers with one, but a proxy or load balancer in between
 * may not (an HTML 502, an empty 503). Those become `code: "unexpected_response"` with the original status.
 */
export const problemResponses: Middleware = {
  async onResponse({ response }) {
    if (response.ok || PROBLEM_TYPE.test(response.headers.get('Content-Type') ?? '')) return undefined;
    const text = await response
      .clone()
      .text()
      .catch(() => '');
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = text;
    }
    if (isProblem(parsed)) return undefined;
    const headers = new Headers(response.headers);
    headers.set('Content-Type', 'application/problem+json');
    headers.delete('Content-Length');
    return new Response(JSON.stringify(unexpectedProblem(response, parsed)), {
      status: response.status,
      statusText: response.statusText,
      headers,
    });
  },
};

function unexpectedProblem(response: Response, body: unknown): UnexpectedResponseProblem {
  const detail = typeof body === 'string' ? body.slice(0, 500) : JSON.stringify(body ?? null).slice(0, 500);
  return {
    type: 'about:blank',
    title: response.statusText || 'Unexpected response',
    status: response.status,
    detail: detail || `The server answered ${response.status} without a problem body.`,
    instance: safePath(response.url),
    code: 'unexpected_response',
  };
}

const safePath = (url: string): string => {
  try {
    return new URL(url).pathname;
  } catch {
    return '';
  }
};
