import { useEffect, useRef, useState } from 'react';
import { clientFor } from '../api/auth';
import { dataOf, toProblem } from '../api/problems';
import type { User } from '../api/types';
import { SubmitButton, TextField } from '../components/fields';
import { ProblemAlert } from '../components/problem';

/**
 * Sign in with an API key: it is checked with GET /me before it is kept (in sessionStorage, see api/session.ts).
 * A key kept from earlier in this tab is checked the same way on load.
 */
export function SignInPage({
  notice,
  storedKey,
  onSignedIn,
}: {
  notice: string | null;
  storedKey: string | null;
  onSignedIn: (apiKey: string, me: User) => void;
}) {
  const [apiKey, setApiKey] = useState('');
  const [pending, setPending] = useState(storedKey !== null);
  const [error, setError] = useState<unknown>(null);
  const checkedStored = useRef(false);

  const signIn = async (key: string) => {
    setPending(true);
    setError(null);
    try {
      const { user } = await dataOf(clientFor(key).getMe());
      onSignedIn(key, user);
    } catch (caught) {
      setError(caught);
      setPending(false);
    }
  };

  useEffect(() => {
    document.title = 'Sign in · works-api console';
    if (storedKey && !checkedStored.current) {
      checkedStored.current = true;
      void signIn(storedKey);
    }
    // Once, on mount: a stored key is checked when the page opens, not whenever a prop changes.
  }, []);

  const problem = error ? toProblem(error) : null;
  return (
    <main id="main" className="sign-in">
      <div className="card sign-in-card">
        <h1>works-api console</h1>
        <p className="muted">
          Sign in with an API key. It is kept in this browser tab only, until you sign out or close the tab.
        </p>
        {notice && (
          <div className="alert alert-warning" role="alert">
            <p>{notice}</p>
          </div>
        )}
        <form
          method="post"
          onSubmit={(event) => {
            event.preventDefault();
            if (apiKey.trim()) void signIn(apiKey.trim());
          }}
        >
          <TextField
            label="API key"
            name="api-key"
            type="password"
            autoComplete="off"
            spellCheck={false}
            required
            value={apiKey}
            onChange={(event) => setApiKey(event.target.value)}
            hint="It starts with wk_. An operator creates your first one; you can make more under API keys."
            error={problem?.status === 401 ? problem.detail : undefined}
          />
          <SubmitButton pending={pending} label="Sign in" pendingLabel="Signing in…" />
        </form>
        {problem && problem.status !== 401 && <ProblemAlert error={error} />}
      </div>
    </main>
  );
}
