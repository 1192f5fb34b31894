import { createClient, type WorksApiClient } from '@works-api/client';
import { createContext, useContext } from 'react';
import { randomKey } from './idempotency';
import type { User } from './types';

/**
 * A signed-in person. The credential is the session cookie the server set at sign-in (HttpOnly: this code never
 * sees it); no API key is ever asked for, kept or sent by the console.
 */
export interface Session {
  api: WorksApiClient;
  /** Who is signed in (GET /me). */
  me: User;
  /** Ends this session (DELETE /me/sessions/{id} of the current one) and shows the sign-in page with `notice`. */
  signOut: (notice?: string) => void;
  /** Shows the sign-in page (the session has ended already, e.g. signed out everywhere). */
  signedOut: (notice?: string) => void;
}

export const SessionContext = createContext<Session | null>(null);

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession outside a signed-in console');
  return session;
}

/**
 * A client for this origin (the server serves the console beside /v1; `pnpm dev` proxies /v1 to it), sending the
 * session cookie (same origin) and no Authorization header.
 */
export function consoleClient(): WorksApiClient {
  return createClient({ baseUrl: window.location.origin, credentials: 'same-origin', idempotencyKey: randomKey });
}
