import { listSessions, requestSignIn, revokeAllSessions, revokeSession, signIn } from '../domain/sessions/sessions';
import type { HandlerMap } from './types';

/** The operations tagged Sessions in openapi/api.yaml, in the spec's order. */
export const sessions = {
  createSignIn: async ({ db, body, sessions: policy, limits }) => ({
    status: 202,
    body: { signIn: await requestSignIn(db, body.email, policy, limits) },
  }),

  createSession: async ({ db, body, sessions: policy, browser }) => {
    const signedIn = await signIn(db, body, policy, {
      replacedTokenHash: browser.presentedSessionHash,
      userAgent: browser.userAgent,
    });
    browser.setSessionCookie(signedIn.cookieValue, signedIn.maxAgeSeconds);
    return {
      status: 201,
      body: { session: signedIn.session, user: signedIn.user },
      location: `/me/sessions/${signedIn.session.id}`,
    };
  },

  listSessions: async ({ db, actor, query, sessions: policy }) => ({
    status: 200,
    body: { sessions: await listSessions(db, actor, query, policy) },
  }),

  revokeAllSessions: async ({ db, actor, browser }) => {
    if ((await revokeAllSessions(db, actor)).current) browser.clearSessionCookie();
    return { status: 204 };
  },

  revokeSession: async ({ db, actor, params, browser }) => {
    if ((await revokeSession(db, actor, params.session_id)).current) browser.clearSessionCookie();
    return { status: 204 };
  },
} satisfies Partial<HandlerMap>;
