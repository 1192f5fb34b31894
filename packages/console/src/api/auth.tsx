import { createClient, type WorksApiClient } from '@works-api/client';
import { createContext, useContext } from 'react';
import { randomKey } from './idempotency';
import type { User } from './types';

export interface Session {
  api: WorksApiClient;
  /** For the one call outside the contract's client (GET /dev/mailbox); never shown, stored or logged. */
  apiKey: string;
  /** Who the key belongs to (GET /me). */
  me: User;
  /** The signed-in key's visible prefix, to point it out among the keys. */
  keyPrefix: string;
  signOut: (notice?: string) => void;
}

export const SessionContext = createContext<Session | null>(null);

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession outside a signed-in console');
  return session;
}

/** A client for this origin (the server serves the console beside /v1; `pnpm dev` proxies /v1 to it). */
export function clientFor(apiKey: string): WorksApiClient {
  return createClient({ baseUrl: window.location.origin, apiKey, idempotencyKey: randomKey });
}
