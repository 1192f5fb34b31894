import { ProblemError } from './errors';

/**
 * A caller's condition on the current state of a resource (HTTP `If-Match`), given as a test of its presented
 * form. Domain functions check it against the row they read and then write conditionally on that row being
 * unchanged, so a change that slips in between makes the write miss and the request fail with 412.
 */
export type Precondition<T> = (current: T) => boolean;

export const preconditionFailed = (): ProblemError =>
  new ProblemError('precondition_failed', 'The resource has changed since you read it: read it again, then retry.');

export function checkPrecondition<T>(precondition: Precondition<T> | undefined, current: () => T): void {
  if (precondition && !precondition(current())) throw preconditionFailed();
}
