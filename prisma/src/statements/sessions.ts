import { type Queryable, sendStatement } from './send';

/**
 * Statements of the `sessions` table: a person signed in to the console (see schema.prisma, model Session). The
 * cookie's id is never stored: every statement takes its SHA-256 (`tokenHash`).
 */

/** What authenticating a request with a session cookie reads: the session, and its user's public fields. */
export interface SessionForAuth {
  id: string;
  userId: string;
  lastUsedAt: Date;
  expiresAt: Date;
  email: string;
  firstName: string;
  lastName: string;
}

const SESSION_FOR_AUTH = `SELECT s.id, s.user_id AS "userId", s.last_used_at AS "lastUsedAt", s.expires_at AS "expiresAt",
            u.email, u.first_name AS "firstName", u.last_name AS "lastName"
     FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.token_hash = :tokenHash`;

/** The session whose cookie hashes to `tokenHash`, with its user (every cookie-authenticated request runs it). */
export async function findSessionForAuth(
  db: Queryable,
  params: { tokenHash: string },
): Promise<SessionForAuth | undefined> {
  const [row] = await sendStatement<SessionForAuth>(db, SESSION_FOR_AUTH, params, { prepared: true });
  return row;
}

const TOUCH_SESSION = 'UPDATE sessions SET last_used_at = :now::timestamptz WHERE id = :id::uuid';

/** Marks a session used now (at most once a minute per session: the caller decides). */
export async function touchSession(db: Queryable, params: { id: string; now: Date }): Promise<void> {
  await sendStatement(db, TOUCH_SESSION, { id: params.id, now: params.now.toISOString() }, { prepared: true });
}

export interface NewSession {
  id: string;
  userId: string;
  tokenHash: string;
  userAgent: string | null;
  now: Date;
  expiresAt: Date;
  /** The session the browser signed in from, if any (rotation: it ends here). */
  replacedTokenHash: string | null;
  /** How many sessions a user keeps: the oldest beyond it (less the new one) end here. */
  maxPerUser: number;
}

const INSERT_SESSION = `WITH replaced AS (
       DELETE FROM sessions WHERE token_hash = :replacedTokenHash),
     oldest AS (
       DELETE FROM sessions WHERE id IN (
         SELECT id FROM sessions WHERE user_id = :userId::uuid ORDER BY id DESC OFFSET :keep))
     INSERT INTO sessions (id, user_id, token_hash, user_agent, created_at, last_used_at, expires_at)
     VALUES (:id::uuid, :userId::uuid, :tokenHash, :userAgent, :now::timestamptz, :now::timestamptz, :expiresAt::timestamptz)`;

/**
 * A new session, in one statement: the browser's previous one (if it sent one) and the user's oldest beyond
 * `maxPerUser` are deleted with it, so a user's sessions stay bounded (the list's count is of a bounded list).
 */
export async function insertSession(db: Queryable, session: NewSession): Promise<void> {
  await sendStatement(db, INSERT_SESSION, {
    id: session.id,
    userId: session.userId,
    tokenHash: session.tokenHash,
    userAgent: session.userAgent,
    now: session.now.toISOString(),
    expiresAt: session.expiresAt.toISOString(),
    replacedTokenHash: session.replacedTokenHash,
    keep: Math.max(0, session.maxPerUser - 1),
  });
}

export interface SessionRow {
  id: string;
  userAgent: string | null;
  createdAt: Date;
  lastUsedAt: Date;
  expiresAt: Date;
}

/** Live: not past its lifetime, and used since `idleSince`. */
const LIVE = 'expires_at > :now::timestamptz AND last_used_at > :idleSince::timestamptz';

const SESSIONS_PAGE = `SELECT id, user_agent AS "userAgent", created_at AS "createdAt", last_used_at AS "lastUsedAt",
            expires_at AS "expiresAt"
     FROM sessions WHERE user_id = :userId::uuid AND (:beforeId::uuid IS NULL OR id < :beforeId::uuid) AND ${LIVE}
     ORDER BY id DESC LIMIT :take`;

/** A page of a user's live sessions, newest first (`take` rows older than `beforeId`). */
export function sessionsPage(
  db: Queryable,
  params: { userId: string; take: number; beforeId?: string | undefined; now: Date; idleSince: Date },
): Promise<SessionRow[]> {
  return sendStatement<SessionRow>(db, SESSIONS_PAGE, {
    userId: params.userId,
    take: params.take,
    beforeId: params.beforeId ?? null,
    now: params.now.toISOString(),
    idleSince: params.idleSince.toISOString(),
  });
}

const COUNT_SESSIONS = `SELECT count(*)::int AS count FROM sessions WHERE user_id = :userId::uuid AND ${LIVE}`;

/** How many live sessions a user has (a bounded list: a user keeps at most a few dozen rows). */
export async function countSessionsOf(
  db: Queryable,
  params: { userId: string; now: Date; idleSince: Date },
): Promise<number> {
  const [row] = await sendStatement<{ count: number }>(db, COUNT_SESSIONS, {
    userId: params.userId,
    now: params.now.toISOString(),
    idleSince: params.idleSince.toISOString(),
  });
  return row?.count ?? 0;
}

const DELETE_SESSION = 'DELETE FROM sessions WHERE id = :id::uuid AND user_id = :userId::uuid RETURNING id';

/** Ends one of a user's sessions; its id when there was one. */
export async function deleteSession(
  db: Queryable,
  params: { id: string; userId: string },
): Promise<string | undefined> {
  const [row] = await sendStatement<{ id: string }>(db, DELETE_SESSION, params);
  return row?.id;
}

const DELETE_SESSIONS_OF = 'DELETE FROM sessions WHERE user_id = :userId::uuid RETURNING id';

/** Ends every session of a user (sign out everywhere); how many there were. */
export async function deleteSessionsOf(db: Queryable, params: { userId: string }): Promise<number> {
  const rows = await sendStatement<{ id: string }>(db, DELETE_SESSIONS_OF, params);
  return rows.length;
}

const DELETE_ENDED_SESSIONS = `DELETE FROM sessions WHERE id IN (
       SELECT id FROM sessions
       WHERE expires_at <= :now::timestamptz OR last_used_at <= :now::timestamptz - :idle::interval
       LIMIT :batch)
     RETURNING id`;

/**
 * Deletes up to `batch` sessions that no longer authenticate (past their lifetime, or idle longer than `idleMs`);
 * how many. The expired ones through the index on `expires_at`; the idle ones as the same scan finds them.
 */
export async function deleteEndedSessions(
  db: Queryable,
  params: { now: Date; idleMs: number; batch: number },
): Promise<number> {
  const rows = await sendStatement<{ id: string }>(db, DELETE_ENDED_SESSIONS, {
    now: params.now.toISOString(),
    idle: `${Math.floor(params.idleMs / 1000)} seconds`,
    batch: params.batch,
  });
  return rows.length;
}
