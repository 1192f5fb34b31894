import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useSession } from '../api/auth';
import { dataOf } from '../api/problems';
import { keys, useSessions } from '../api/queries';
import type { SessionInfo } from '../api/types';
import { ConfirmButton } from '../components/confirm';
import { formatTime } from '../components/format';
import { PagedList } from '../components/lists';
import { Page, Section } from '../components/page';
import { ProblemAlert } from '../components/problem';

/** The browsers signed in as this person: end any one, or all at once (sign out everywhere). */
export function SessionsPage() {
  const sessionsQuery = useSessions();
  const { api, signedOut } = useSession();
  const everywhere = useMutation({
    mutationFn: () => dataOf(api.revokeAllSessions()),
    onSuccess: () => signedOut('You are signed out everywhere.'),
  });
  return (
    <Page title="Sessions">
      <div className="columns">
        <Section title="Where you are signed in" id="sessions">
          <PagedList query={sessionsQuery} noun="sessions" empty="No sessions.">
            {(nodes) => (
              <ul className="rows">
                {nodes.map((session) => (
                  <SessionRow key={session.id} session={session} />
                ))}
              </ul>
            )}
          </PagedList>
        </Section>
        <Section title="Sign out everywhere" id="everywhere">
          <p className="muted">Ends every session, this one included. API keys keep working.</p>
          <ConfirmButton
            label="Sign out everywhere"
            question="End every session, this one included?"
            confirmLabel="Yes, sign out everywhere"
            pending={everywhere.isPending}
            onConfirm={() => everywhere.mutate()}
          />
          {everywhere.error && <ProblemAlert error={everywhere.error} />}
        </Section>
      </div>
    </Page>
  );
}

function SessionRow({ session }: { session: SessionInfo }) {
  const { api, signedOut } = useSession();
  const queryClient = useQueryClient();
  const revoke = useMutation({
    mutationFn: () => dataOf(api.revokeSession({ params: { path: { session_id: session.id } } })),
    onSuccess: () => {
      if (session.current) signedOut('You are signed out.');
      else void queryClient.invalidateQueries({ queryKey: keys.sessions });
    },
  });
  return (
    <li className="row">
      <span className="row-title">
        {session.userAgent ?? 'A browser'}
        {session.current && <span className="badge">this browser</span>}
      </span>
      <span className="muted">
        signed in {formatTime(session.createdAt)} · last used {formatTime(session.lastUsedAt)} · ends by{' '}
        {formatTime(session.expiresAt)}
      </span>
      <span className="row-meta">
        <ConfirmButton
          label={session.current ? 'Sign out' : 'End'}
          question={session.current ? 'Sign out of this browser?' : 'End this session? That browser is signed out.'}
          confirmLabel={session.current ? 'Yes, sign out' : 'Yes, end it'}
          pending={revoke.isPending}
          onConfirm={() => revoke.mutate()}
        />
      </span>
      {revoke.error && <ProblemAlert error={revoke.error} />}
    </li>
  );
}
