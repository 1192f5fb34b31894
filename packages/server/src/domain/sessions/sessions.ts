import type { Db } from '@works-api/prisma';
import {
  countSessionsOf,
  deleteSession,
  deleteSessionsOf,
  findSessionForAuth,
  findSignInByCode,
  findSignInByToken,
  findUser,
  insertSession,
  insertSignedUpUser,
  inTransaction,
  isId,
  newId,
  queueSignIn,
  type SessionRow,
  sessionsPage,
  type SignInRow,
  type SignUpPolicy,
  touchSession,
  useSignIn,
} from '@works-api/prisma';
import type { Actor } from '../access';
import { unauthenticated } from '../api-keys/api-keys';
import { notFound, ProblemError } from '../errors';
import { type PageRequest, readPage } from '../paging';
import type { Schemas } from '../schemas';
import { normalizeEmail, normalizeName, presentUser } from '../users/present';
import { type MailCaps, mailCapRefusal } from '../../mail/caps';
import { codeHashOf, MAX_CODE_FAILURES, newSessionSecret, sessionHashOf, SIGN_IN_TTL_MS, tokenHashOf } from './secrets';

/** What sessions and sign-in follow (config.ts, `SessionSettings`). */
export interface SessionPolicy {
  signUp: SignUpPolicy;
  idleTimeoutMs: number;
  lifetimeMs: number;
  maxPerUser: number;
  emailsPerAddressPerHour: number;
}

// As for API keys' lastUsedAt: idle time is tracked to the minute, so a session's requests are not each a write.
const LAST_USED_PRECISION_MS = 60_000;
const HOUR_MS = 3_600_000;
const USER_AGENT_LENGTH = 200;

const SIGN_IN_AGAIN = 'Sign in again (the console emails you a link).';

/** The caller behind a presented session cookie, or 401 (saying why, and what to do). */
export async function authenticateSession(
  db: Db,
  presented: string,
  policy: Pick<SessionPolicy, 'idleTimeoutMs'>,
  now = new Date(),
): Promise<Actor> {
  const tokenHash = sessionHashOf(presented);
  const session = tokenHash === undefined ? undefined : await findSessionForAuth(db, { tokenHash });
  if (!session)
    throw unauthenticated(
      `This session is not known here: it was signed out or has ended, or it is another deployment's. ${SIGN_IN_AGAIN}`,
    );
  if (session.expiresAt <= now)
    throw unauthenticated(`This session has reached the end of its lifetime. ${SIGN_IN_AGAIN}`);
  const idle = now.getTime() - session.lastUsedAt.getTime();
  if (idle >= policy.idleTimeoutMs) throw unauthenticated(`This session ended after going unused. ${SIGN_IN_AGAIN}`);
  if (idle > LAST_USED_PRECISION_MS) await touchSession(db, { id: session.id, now });
  const { email, firstName, lastName } = session;
  // A session is its user's whole power: no tenant or scope limit (the role alone decides, as for a full key).
  return {
    userId: session.userId,
    user: { email, firstName, lastName },
    via: 'session',
    credentialId: session.id,
    tenants: null,
    scopes: null,
  };
}

/**
 * POST /sessions/email: queues a sign-in email, one statement whatever the address (the sender decides whether it
 * may sign in, after this answer: no account oracle, in the answer or in its time). Over the per-address cap, 429.
 */
export async function requestSignIn(
  db: Db,
  email: string,
  policy: Pick<SessionPolicy, 'emailsPerAddressPerHour'>,
  caps: MailCaps,
  now = new Date(),
): Promise<Schemas['SignInRequested']> {
  const address = normalizeEmail(email);
  const { queued, oldestCountedAt } = await queueSignIn(db, {
    id: newId(),
    mailId: newId(),
    email: address,
    now,
    caps,
    cap: policy.emailsPerAddressPerHour,
    since: new Date(now.getTime() - HOUR_MS),
  }).catch((error: unknown) => {
    // Over the daily cap of every email to this address (counted with the tenants' emails): 429 until tomorrow.
    throw mailCapRefusal(error, caps, now) ?? error;
  });
  if (!queued) {
    const until = (oldestCountedAt?.getTime() ?? now.getTime()) + HOUR_MS;
    throw new ProblemError(
      'sign_in_limit_reached',
      `This address has been sent ${policy.emailsPerAddressPerHour} sign-in emails in the last hour, the most allowed; the ones sent still work, or retry after Retry-After.`,
      {},
      Math.max(1, Math.ceil((until - now.getTime()) / 1000)),
    );
  }
  db.outbox.mail.signal();
  return { email: address, validForSeconds: SIGN_IN_TTL_MS / 1000 };
}

const ASK_AGAIN = 'Ask for a new one on the sign-in page.';

export interface SignInBrowser {
  /** The hash of the session cookie the browser sent (rotation: that session ends). */
  replacedTokenHash: string | undefined;
  userAgent: string | null;
}

export interface SignedIn {
  session: Schemas['Session'];
  user: Schemas['User'];
  /** The new cookie's value (shown to no one but the browser's cookie jar). */
  cookieValue: string;
  maxAgeSeconds: number;
}

/** POST /sessions: an emailed link's token, or an address and its code, for a new session. */
export async function signIn(
  db: Db,
  body: Schemas['CreateSessionBody'],
  policy: SessionPolicy,
  browser: SignInBrowser,
  now = new Date(),
): Promise<SignedIn> {
  const found = await findSignIn(db, body, now);
  if (!found) throw new ProblemError('invalid_sign_in', `This sign-in link or code is not one of ours. ${ASK_AGAIN}`);
  if (found.usedAt) throw signInUsed();
  if (!found.expiresAt || found.expiresAt <= now)
    throw new ProblemError('sign_in_expired', `This sign-in link has expired (they work for 15 minutes). ${ASK_AGAIN}`);
  let names: { firstName: string; lastName: string } | undefined;
  if (!found.userId) {
    const mayJoin = policy.signUp === 'open' || (policy.signUp === 'invite' && found.invited);
    if (!mayJoin)
      throw new ProblemError(
        'sign_up_not_allowed',
        policy.signUp === 'closed'
          ? 'No account has this address, and this service makes no new accounts by sign-in. Ask its operator.'
          : 'No account has this address, and this service makes accounts only for invited addresses. Ask to be invited.',
      );
    const firstName = normalizeName(body.firstName ?? '');
    const lastName = normalizeName(body.lastName ?? '');
    if (firstName === '' || lastName === '')
      throw new ProblemError(
        'names_required',
        'No account has this address yet: give your first and last name to create it (the link still works).',
        {
          errors: [
            ...(firstName === ''
              ? [{ path: '/body/firstName', message: 'firstName is required to create the account' }]
              : []),
            ...(lastName === ''
              ? [{ path: '/body/lastName', message: 'lastName is required to create the account' }]
              : []),
          ],
        },
      );
    names = { firstName, lastName };
  }
  const secret = newSessionSecret();
  const sessionId = newId();
  const expiresAt = new Date(now.getTime() + policy.lifetimeMs);
  const userAgent = browser.userAgent === null ? null : [...browser.userAgent].slice(0, USER_AGENT_LENGTH).join('');
  const userId = await inTransaction(db, async (tx) => {
    if (!(await useSignIn(tx, { id: found.id, now }))) throw signInUsed();
    const id = found.userId ?? (await insertSignedUpUser(tx, { id: newId(), email: found.email, ...names!, now }));
    await insertSession(tx, {
      id: sessionId,
      userId: id,
      tokenHash: secret.tokenHash,
      userAgent,
      now,
      expiresAt,
      replacedTokenHash: browser.replacedTokenHash ?? null,
      maxPerUser: policy.maxPerUser,
    });
    return id;
  });
  const user = await findUser(db, userId);
  if (!user) throw signInUsed(); // deleted meanwhile: nothing to sign in to
  return {
    session: presentSession({ id: sessionId, userAgent, createdAt: now, lastUsedAt: now, expiresAt }, sessionId),
    user: presentUser(user),
    cookieValue: secret.cookieValue,
    maxAgeSeconds: Math.floor(policy.lifetimeMs / 1000),
  };
}

const signInUsed = () =>
  new ProblemError('sign_in_used', `This sign-in link was used already (each works once). ${ASK_AGAIN}`);

function findSignIn(db: Db, body: Schemas['CreateSessionBody'], now: Date): Promise<SignInRow | undefined> {
  if ('token' in body) {
    const tokenHash = tokenHashOf(body.token);
    return tokenHash === undefined ? Promise.resolve(undefined) : findSignInByToken(db, { tokenHash, now });
  }
  const codeHash = codeHashOf(body.code);
  if (codeHash === undefined) return Promise.resolve(undefined);
  return findSignInByCode(db, {
    email: normalizeEmail(body.email),
    codeHash,
    now,
    withinMs: SIGN_IN_TTL_MS * 2,
    maxFailures: MAX_CODE_FAILURES,
  });
}

interface SessionRowLike {
  id: string;
  userAgent: string | null;
  createdAt: Date;
  lastUsedAt: Date;
  expiresAt: Date;
}

const presentSession = (row: SessionRowLike, currentId: string | undefined): Schemas['Session'] => ({
  id: row.id,
  createdAt: row.createdAt.toISOString(),
  lastUsedAt: row.lastUsedAt.toISOString(),
  expiresAt: row.expiresAt.toISOString(),
  current: row.id === currentId,
  userAgent: row.userAgent,
});

const currentSessionOf = (actor: Actor): string | undefined =>
  actor.via === 'session' ? actor.credentialId : undefined;

export function listSessions(
  db: Db,
  actor: Actor,
  request: PageRequest,
  policy: Pick<SessionPolicy, 'idleTimeoutMs'>,
  now = new Date(),
) {
  const idleSince = new Date(now.getTime() - policy.idleTimeoutMs);
  return readPage<SessionRow, Schemas['Session']>(request, {
    rows: (page) =>
      sessionsPage(db, { userId: actor.userId, take: page.take, beforeId: page.beforeId, now, idleSince }),
    totalCount: () => countSessionsOf(db, { userId: actor.userId, now, idleSince }),
    present: (row: SessionRow) => presentSession(row, currentSessionOf(actor)),
  });
}

/** Ends one of the caller's sessions (404 for any other id); true when it was the caller's own. */
export async function revokeSession(db: Db, actor: Actor, sessionId: string): Promise<{ current: boolean }> {
  if (!isId(sessionId) || !(await deleteSession(db, { id: sessionId, userId: actor.userId })))
    throw notFound('session');
  return { current: sessionId === currentSessionOf(actor) };
}

/** Ends every session of the caller; true when the request came with one of them. */
export async function revokeAllSessions(db: Db, actor: Actor): Promise<{ current: boolean }> {
  await deleteSessionsOf(db, { userId: actor.userId });
  return { current: actor.via === 'session' };
}
