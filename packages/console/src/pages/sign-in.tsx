import { useEffect, useRef, useState } from 'react';
import { consoleClient } from '../api/auth';
import { dataOf, fieldErrors, toProblem } from '../api/problems';
import { invitedEmail, takeSignInToken } from '../api/session';
import type { User } from '../api/types';
import { SubmitButton, TextField } from '../components/fields';
import { ProblemAlert } from '../components/problem';

type Proof = { token: string } | { email: string; code: string };

/**
 * Sign in by email: the person types their address and gets a link and a code (POST /v1/sessions/email). The link
 * opens this page with the token in the fragment, which is posted at once; the code is typed here, for a person
 * reading the email on another device. An address without an account (an invited person) is asked for their names,
 * and the same link or code is posted again with them. Never an API key.
 */
export function SignInPage({ notice, onSignedIn }: { notice: string | null; onSignedIn: (me: User) => void }) {
  const [email, setEmail] = useState(invitedEmail);
  const [code, setCode] = useState('');
  const [names, setNames] = useState({ firstName: '', lastName: '' });
  const [sentTo, setSentTo] = useState<string | null>(null);
  const [needsNames, setNeedsNames] = useState<Proof | null>(null);
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const tookToken = useRef(false);

  const exchange = async (proof: Proof, withNames = false) => {
    setPending(true);
    setError(null);
    try {
      const api = consoleClient();
      const { user } = await dataOf(api.createSession({ body: withNames ? { ...proof, ...names } : proof }));
      onSignedIn(user);
    } catch (caught) {
      if (toProblem(caught).code === 'names_required') setNeedsNames(proof);
      else setError(caught);
      setPending(false);
    }
  };

  const askForEmail = async () => {
    setPending(true);
    setError(null);
    try {
      const { signIn } = await dataOf(consoleClient().createSignIn({ body: { email } }));
      setSentTo(signIn.email);
    } catch (caught) {
      setError(caught);
    }
    setPending(false);
  };

  useEffect(() => {
    document.title = 'Sign in · works-api console';
    if (tookToken.current) return;
    tookToken.current = true;
    const token = takeSignInToken();
    if (token) void exchange({ token });
    // Once, on mount: the link's token is read when the page opens.
  }, []);

  const problem = error ? toProblem(error) : null;
  const expired = problem?.status === 410 || problem?.code === 'invalid_sign_in';
  return (
    <main id="main" className="sign-in">
      <div className="card sign-in-card">
        <h1>works-api console</h1>
        {notice && (
          <div className="alert alert-warning" role="alert">
            <p>{notice}</p>
          </div>
        )}
        {needsNames ? (
          <form
            method="post"
            onSubmit={(event) => {
              event.preventDefault();
              void exchange(needsNames, true);
            }}
          >
            <p>Welcome! No account has this address yet: tell us your name to create it.</p>
            <TextField
              label="First name"
              autoComplete="given-name"
              required
              value={names.firstName}
              onChange={(event) => setNames({ ...names, firstName: event.target.value })}
              error={fieldErrors(error).firstName}
            />
            <TextField
              label="Last name"
              autoComplete="family-name"
              required
              value={names.lastName}
              onChange={(event) => setNames({ ...names, lastName: event.target.value })}
              error={fieldErrors(error).lastName}
            />
            <SubmitButton pending={pending} label="Create my account" pendingLabel="Signing in…" />
          </form>
        ) : sentTo ? (
          <form
            method="post"
            onSubmit={(event) => {
              event.preventDefault();
              void exchange({ email: sentTo, code });
            }}
          >
            <p role="status">
              If <strong>{sentTo}</strong> may sign in here, an email is on its way with a sign-in link and a code. They
              work once, for 15 minutes. Open the link on this device, or type the code below.
            </p>
            <TextField
              label="Code from the email"
              name="code"
              autoComplete="one-time-code"
              spellCheck={false}
              required
              value={code}
              onChange={(event) => setCode(event.target.value)}
              hint="Like KQ7M-XR4P"
            />
            <SubmitButton pending={pending} label="Sign in" pendingLabel="Signing in…" />
            <p>
              <button type="button" className="link-button" onClick={() => setSentTo(null)}>
                Use another address, or send a new email
              </button>
            </p>
          </form>
        ) : (
          <form
            method="post"
            onSubmit={(event) => {
              event.preventDefault();
              if (email.trim()) void askForEmail();
            }}
          >
            <p className="muted">Sign in with your email address: we email you a link and a code.</p>
            <TextField
              label="Email"
              name="email"
              type="email"
              autoComplete="email"
              required
              value={email}
              onChange={(event) => setEmail(event.target.value)}
              error={fieldErrors(error).email}
            />
            <SubmitButton pending={pending} label="Email me a sign-in link" pendingLabel="Sending…" />
          </form>
        )}
        {problem && (
          <>
            <ProblemAlert error={error} shownFields={['email', 'firstName', 'lastName']} />
            {expired && !sentTo && <p className="muted">Type your address above to get a new sign-in link.</p>}
          </>
        )}
      </div>
    </main>
  );
}
