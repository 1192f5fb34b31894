import type { ReactNode } from 'react';
import { fieldErrors, isConflict, toProblem } from '../api/problems';

/**
 * An error as the API described it: its `title` and `detail` (and field errors not shown beside a field).
 * `role="alert"` so a screen reader announces it when it appears.
 */
export function ProblemAlert({
  error,
  shownFields = [],
  children,
}: {
  error: unknown;
  shownFields?: string[];
  children?: ReactNode;
}) {
  const problem = toProblem(error);
  const others = Object.entries(fieldErrors(error)).filter(([field]) => !shownFields.includes(field));
  return (
    <div className="alert alert-error" role="alert">
      <p className="alert-title">
        {problem.title}
        {problem.status > 0 && <span className="alert-status"> ({problem.status})</span>}
      </p>
      <p>{problem.detail}</p>
      {others.length > 0 && (
        <ul>
          {others.map(([field, message]) => (
            <li key={field}>
              <code>{field}</code>: {message}
            </li>
          ))}
        </ul>
      )}
      {problem.requestId && <p className="muted">Request id: {problem.requestId}</p>}
      {children}
    </div>
  );
}

/**
 * A 412 or a refused transition means somebody else changed the thing since this page read it: nothing was saved.
 * Offers to reload it, never to overwrite.
 */
export function ConflictAlert({ what, onReload }: { what: string; onReload: () => void }) {
  return (
    <div className="alert alert-warning" role="alert">
      <p className="alert-title">Changed by someone else</p>
      <p>
        This {what} was changed by someone else since you opened it, so your change was not saved. Reload to see the
        current version, then decide again.
      </p>
      <button type="button" className="button" onClick={onReload}>
        Reload {what}
      </button>
    </div>
  );
}

/** A mutation's error: the conflict notice for a conflict, the problem otherwise. */
export function MutationError({
  error,
  what,
  onReload,
  shownFields,
}: {
  error: unknown;
  what: string;
  onReload: () => void;
  shownFields?: string[];
}) {
  if (error == null) return null;
  if (isConflict(error)) return <ConflictAlert what={what} onReload={onReload} />;
  return <ProblemAlert error={error} shownFields={shownFields} />;
}
