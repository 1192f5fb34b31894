import { isProblem, type Problem, ProblemError, unwrap } from '@works-api/client';

/** Any error a call can end with, as a Problem to show: the API's own, or one for a request that got no answer. */
export function toProblem(error: unknown): Problem {
  if (error instanceof ProblemError) return error.problem;
  if (isProblem(error)) return error;
  return {
    type: 'about:blank',
    title: 'No answer from the server',
    status: 0,
    detail:
      'The request did not reach the server, or its answer did not come back. Check the connection and try again.',
    instance: '',
    code: 'network_error',
  };
}

/**
 * Found before sending anything: a fresh read of the resource no longer shows what the page shows (someone else
 * changed or removed it), so the change the user asked for would be decided on a stale view. Nothing was sent.
 */
export class ChangedElsewhere extends Error {
  constructor(what: string) {
    super(`The ${what} changed since this page read it.`);
    this.name = 'ChangedElsewhere';
  }
}

/**
 * "Changed by someone else": the If-Match tag no longer matches (412), a request action that was allowed when
 * the page was loaded no longer is (409 invalid_transition), or a re-read before the change found it changed
 * (ChangedElsewhere). Either way, nothing was changed.
 */
export function isConflict(error: unknown): boolean {
  if (error instanceof ChangedElsewhere) return true;
  const { code } = toProblem(error);
  return code === 'precondition_failed' || code === 'invalid_transition';
}

/** The problem's field errors by the body property they are about: `/body/recipient/email` → `recipient.email`. */
export function fieldErrors(error: unknown): Record<string, string> {
  if (error == null) return {};
  const out: Record<string, string> = {};
  for (const { path, message } of toProblem(error).errors ?? []) {
    const field = path
      .replace(/^\/body\/?/, '')
      .split('/')
      .filter(Boolean)
      .join('.');
    if (field && !(field in out)) out[field] = message;
  }
  return out;
}

/** The result's data and its ETag (for If-Match), or a thrown ProblemError. */
export async function withTag<T>(
  pending: Promise<{ data?: T; error?: unknown; response: Response }>,
): Promise<{ data: T; etag: string | null }> {
  const result = await pending;
  return { data: unwrap(result), etag: result.response.headers.get('ETag') };
}

/** The result's data, or a thrown ProblemError. */
export async function dataOf<T>(pending: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  return unwrap(await pending);
}
