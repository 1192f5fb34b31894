import {
  MutationCache,
  QueryCache,
  QueryClient,
  QueryClientProvider,
  useIsFetching,
  useIsMutating,
} from '@tanstack/react-query';
import { ProblemError } from '@works-api/client';
import { useEffect, useMemo, useRef, useState } from 'react';
import { Link, Route, Router, Switch, useLocation } from 'wouter';
import { consoleClient, type Session, SessionContext, useSession } from './api/auth';
import { devMailboxKey, useDevMailbox } from './api/dev-mailbox';
import { useMyInvitations } from './api/queries';
import { dataOf } from './api/problems';
import type { User } from './api/types';
import { ApiKeysPage } from './pages/api-keys';
import { EventsPage } from './pages/events';
import { TenantRequestsPage } from './pages/tenant-requests';
import { InvitationsPage } from './pages/invitations';
import { MailboxPage } from './pages/mailbox';
import { NotFoundPage } from './pages/not-found';
import { RequestPage } from './pages/request';
import { SessionsPage } from './pages/sessions';
import { SignInPage } from './pages/sign-in';
import { TenantPage } from './pages/tenant';
import { TenantsPage } from './pages/tenants';
import { WorkPage } from './pages/work';

/** Where the server serves the console; the router's paths are below it. */
const BASE = import.meta.env.BASE_URL.replace(/\/$/, '');

export function App() {
  // undefined: not known yet (GET /me with the cookie, if any, is on its way); null: signed out.
  const [me, setMe] = useState<User | null | undefined>(undefined);
  const [notice, setNotice] = useState<string | null>(null);
  const api = useMemo(() => consoleClient(), []);
  // The 401 handler below needs the latest signOut; the QueryClient is made once.
  const signOutRef = useRef<(notice?: string) => void>(() => undefined);
  const queryClient = useMemo(() => {
    const onError = (error: unknown) => {
      if (error instanceof ProblemError && error.status === 401) {
        signOutRef.current('Your session has ended (signed out, or unused for too long). Sign in again.');
      }
    };
    return new QueryClient({
      queryCache: new QueryCache({ onError }),
      mutationCache: new MutationCache({ onError }),
      // The client already retries what is safe to retry (429, 503, network errors); a 4xx will not change.
      defaultOptions: { queries: { retry: false, staleTime: 10_000 }, mutations: { retry: false } },
    });
  }, []);

  const signedOut = (message?: string) => {
    queryClient.clear();
    setMe(null);
    setNotice(message ?? null);
  };
  signOutRef.current = signedOut;

  // The cookie (HttpOnly) is not readable here: whether this browser is signed in is GET /me's answer.
  useEffect(() => {
    api
      .getMe()
      .then((result) => setMe(result.data?.user ?? null))
      .catch(() => setMe(null));
  }, [api]);

  const session: Session | null = useMemo(
    () =>
      me
        ? {
            api,
            me,
            signedOut: (m?: string) => signOutRef.current(m),
            signOut: (m?: string) => {
              // The current session is the one the list marks: end it, then show the sign-in page.
              void (async () => {
                try {
                  const { sessions } = await dataOf(api.listSessions());
                  const current = sessions.edges.find((edge) => edge.node.current);
                  if (current) await api.revokeSession({ params: { path: { session_id: current.node.id } } });
                } finally {
                  signOutRef.current(m);
                }
              })();
            },
          }
        : null,
    [api, me],
  );

  return (
    <QueryClientProvider client={queryClient}>
      <Router base={BASE}>
        {session ? (
          <SessionContext.Provider value={session}>
            <Layout>
              <Switch>
                <Route path="/" component={TenantsPage} />
                <Route path="/tenants/:tenantId" component={TenantPage} />
                <Route path="/tenants/:tenantId/requests" component={TenantRequestsPage} />
                <Route path="/tenants/:tenantId/events" component={EventsPage} />
                <Route path="/tenants/:tenantId/works/:workId" component={WorkPage} />
                <Route path="/tenants/:tenantId/works/:workId/requests/:requestId" component={RequestPage} />
                <Route path="/api-keys" component={ApiKeysPage} />
                <Route path="/sessions" component={SessionsPage} />
                <Route path="/invitations" component={InvitationsPage} />
                <Route path="/mailbox" component={MailboxPage} />
                <Route component={NotFoundPage} />
              </Switch>
            </Layout>
          </SessionContext.Provider>
        ) : me === null ? (
          <SignInPage
            notice={notice}
            onSignedIn={(user) => {
              setNotice(null);
              setMe(user);
              // The emailed link opens /console/sign-in: once signed in, go home.
              if (window.location.pathname.endsWith('/sign-in')) window.history.replaceState(null, '', `${BASE}/`);
            }}
          />
        ) : (
          <main id="main" className="sign-in" aria-busy="true" />
        )}
      </Router>
    </QueryClientProvider>
  );
}

function Layout({ children }: { children: React.ReactNode }) {
  const { me, signOut } = useSession();
  const name = [me.firstName, me.lastName].filter(Boolean).join(' ');
  // Only a server without SMTP has a dev mailbox (GET /dev/mailbox answers 404 otherwise).
  const hasMailbox = Boolean(useDevMailbox().data);
  // How many invitations wait for an answer: shown beside the link, so that nobody misses one.
  const pending = useMyInvitations().data?.pages[0]?.totalCount ?? 0;
  return (
    <>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="top">
        <div className="top-inner">
          <Link href="/" className="brand">
            works-api <span>console</span>
          </Link>
          <nav aria-label="Main">
            <ul>
              <li>
                <NavLink href="/">Tenants</NavLink>
              </li>
              <li>
                <NavLink href="/invitations">
                  Invitations
                  {pending > 0 && (
                    <span className="badge" aria-label={`${pending} pending`}>
                      {pending}
                    </span>
                  )}
                </NavLink>
              </li>
              <li>
                <NavLink href="/api-keys">API keys</NavLink>
              </li>
              <li>
                <NavLink href="/sessions">Sessions</NavLink>
              </li>
              {hasMailbox && (
                <li>
                  <NavLink href="/mailbox">Mailbox</NavLink>
                </li>
              )}
            </ul>
          </nav>
          <div className="who">
            <span className="who-name" data-testid="signed-in-as">
              Signed in as <strong>{name || me.email}</strong>
              {name && <span className="who-email"> ({me.email})</span>}
            </span>
            <button type="button" className="button" onClick={() => signOut()}>
              Sign out
            </button>
          </div>
        </div>
        <Activity />
      </header>
      <main id="main" tabIndex={-1}>
        {children}
      </main>
    </>
  );
}

/**
 * A thin bar while anything loads or saves, so long work always shows progress. Not for the Mailbox's look for new
 * emails every few seconds, which would make it flicker for as long as that page is open.
 */
function Activity() {
  const busy = useIsFetching({ predicate: (query) => query.queryKey[0] !== devMailboxKey[0] }) + useIsMutating() > 0;
  return (
    <div className="activity" role="progressbar" aria-label="Loading" hidden={!busy}>
      <span />
    </div>
  );
}

/** A main navigation link; the current section is marked for assistive technology too (aria-current). */
function NavLink({ href, children }: { href: string; children: React.ReactNode }) {
  const [location] = useLocation();
  const current = href === '/' ? location === '/' || location.startsWith('/tenants') : location.startsWith(href);
  return (
    <Link href={href} aria-current={current ? 'page' : undefined}>
      {children}
    </Link>
  );
}
