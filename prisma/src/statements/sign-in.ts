import { type Queryable, sendStatement } from './send';
import { MAIL_ALLOWANCE_CALL, type MailAllowanceCaps, mailAllowanceParams } from './mail-recipients';

/**
 * Statements of emailed sign-in (POST /v1/sessions/email, then POST /v1/sessions): the `sign_in_links` table (see
 * schema.prisma, model SignInLink) and the sign-in email's row in the mail outbox. Tokens and codes are never
 * stored: only their SHA-256.
 */

export interface NewSignIn {
  id: string;
  mailId: string;
  email: string;
  now: Date;
  /** The daily caps: a sign-in email counts with every other email to its address (service-wide cap). */
  caps: MailAllowanceCaps;
  /** The per-address cap: at most `cap` sign-ins for one canonical address since `since`. */
  cap: number;
  since: Date;
}

const QUEUE_SIGN_IN = `WITH recent AS (
       SELECT count(*) AS n, min(created_at) AS oldest FROM (
         SELECT created_at FROM sign_in_links
         WHERE canonical_email = canonical_email(:email) AND created_at > :since::timestamptz
         ORDER BY created_at LIMIT :cap) r),
     link AS (
       INSERT INTO sign_in_links (id, email, canonical_email, created_at)
       SELECT :id::uuid, :email, canonical_email(:email), :now::timestamptz FROM recent
       -- CASE: the allowance is taken only for an email that will be queued.
       WHERE CASE WHEN n < :cap THEN (${MAIL_ALLOWANCE_CALL}) IS NOT NULL ELSE false END
       RETURNING id),
     mail AS (
       INSERT INTO mail_outbox (id, kind, sign_in_id, "to", next_attempt_at, created_at)
       SELECT :mailId::uuid, 'sign_in', link.id, :email, :now::timestamptz, :now::timestamptz FROM link
       RETURNING id)
     SELECT EXISTS (SELECT 1 FROM mail) AS queued, (SELECT oldest FROM recent) AS oldest`;

/**
 * Queues a sign-in (its row and its email, one statement) unless the address already asked `cap` times since
 * `since` (compared in canonical form, `canonical_email`). The email counts with every other email to the address
 * (`take_mail_allowance`, as an email the address asked for: only the service-wide cap, and no stop holds it), in
 * the same statement: over that cap the statement fails with WA003 and nothing is queued. The same statement for
 * every address, whether or not it has an account: the answer tells nothing. Returns whether it was queued, and
 * when the oldest counted one leaves the window (for `Retry-After`).
 */
export async function queueSignIn(
  db: Queryable,
  signIn: NewSignIn,
): Promise<{ queued: boolean; oldestCountedAt: Date | null }> {
  const [row] = await sendStatement<{ queued: boolean; oldest: Date | null }>(db, QUEUE_SIGN_IN, {
    id: signIn.id,
    mailId: signIn.mailId,
    email: signIn.email,
    now: signIn.now.toISOString(),
    since: signIn.since.toISOString(),
    cap: signIn.cap,
    ...mailAllowanceParams({ kind: 'asked-by-address', email: signIn.email }, signIn.caps, signIn.now),
  });
  return { queued: row?.queued ?? false, oldestCountedAt: row?.oldest ?? null };
}

export type SignUpPolicy = 'invite' | 'open' | 'closed';

const ARM_SIGN_IN = `WITH link AS (
       SELECT l.id, l.email, EXISTS (SELECT 1 FROM users u WHERE u.email = l.email) AS has_account
       FROM sign_in_links l WHERE l.id = :id::uuid AND l.used_at IS NULL)
     UPDATE sign_in_links s
     SET token_hash = :tokenHash, code_hash = :codeHash, expires_at = :expiresAt::timestamptz, code_failures = 0
     FROM link
     WHERE s.id = link.id AND (link.has_account OR :signUp = 'open' OR (:signUp = 'invite' AND EXISTS (
       SELECT 1 FROM invitations i WHERE i.email = link.email AND i.expires_at > :now::timestamptz)))
     RETURNING s.email, link.has_account AS "hasAccount"`;

/**
 * Arms a sign-in as its email is sent: stores the hashes of the link's token and of the code (replacing those of
 * an earlier attempt at this email), valid until `expiresAt`, only if the address may sign in under `signUp` (it
 * has an account; or `open`; or `invite` and a pending invitation names it). Returns the address to write to, or
 * undefined when there is nothing to send (it may not sign in, or the link was used).
 */
export async function armSignIn(
  db: Queryable,
  params: { id: string; tokenHash: string; codeHash: string; expiresAt: Date; now: Date; signUp: SignUpPolicy },
): Promise<{ email: string; hasAccount: boolean } | undefined> {
  const [row] = await sendStatement<{ email: string; hasAccount: boolean }>(db, ARM_SIGN_IN, {
    id: params.id,
    tokenHash: params.tokenHash,
    codeHash: params.codeHash,
    expiresAt: params.expiresAt.toISOString(),
    now: params.now.toISOString(),
    signUp: params.signUp,
  });
  return row;
}

export interface SignInRow {
  id: string;
  email: string;
  expiresAt: Date | null;
  usedAt: Date | null;
  codeFailures: number;
  /** The account the address has, if any. */
  userId: string | null;
  /** Whether a pending invitation names the address (for `SIGNUP=invite`). */
  invited: boolean;
}

const SIGN_IN_COLUMNS = `l.id, l.email, l.expires_at AS "expiresAt", l.used_at AS "usedAt",
  l.code_failures AS "codeFailures", u.id AS "userId",
  EXISTS (SELECT 1 FROM invitations i WHERE i.email = l.email AND i.expires_at > :now::timestamptz) AS invited`;

const SIGN_IN_BY_TOKEN = `SELECT ${SIGN_IN_COLUMNS} FROM sign_in_links l LEFT JOIN users u ON u.email = l.email
     WHERE l.token_hash = :tokenHash`;

/** The sign-in whose link carries this token (by its hash). */
export async function findSignInByToken(
  db: Queryable,
  params: { tokenHash: string; now: Date },
): Promise<SignInRow | undefined> {
  const [row] = await sendStatement<SignInRow>(db, SIGN_IN_BY_TOKEN, {
    tokenHash: params.tokenHash,
    now: params.now.toISOString(),
  });
  return row;
}

const SIGN_IN_BY_CODE = `SELECT ${SIGN_IN_COLUMNS} FROM sign_in_links l LEFT JOIN users u ON u.email = l.email
     WHERE l.email = :email AND l.created_at > :since::timestamptz AND l.code_hash = :codeHash
       AND l.code_failures < :maxFailures
     ORDER BY l.created_at DESC LIMIT 1`;

const COUNT_WRONG_CODE = `UPDATE sign_in_links SET code_failures = code_failures + 1
     WHERE email = :email AND created_at > :since::timestamptz AND used_at IS NULL AND code_hash IS NOT NULL
       AND code_failures < :maxFailures`;

/**
 * The sign-in of this address whose code hashes to `codeHash`, among those sent in the last `withinMs` whose code
 * still works (fewer than `maxFailures` wrong codes); when none matches, each of those counts one more wrong code.
 */
export async function findSignInByCode(
  db: Queryable,
  params: { email: string; codeHash: string; now: Date; withinMs: number; maxFailures: number },
): Promise<SignInRow | undefined> {
  const values = {
    email: params.email,
    codeHash: params.codeHash,
    now: params.now.toISOString(),
    since: new Date(params.now.getTime() - params.withinMs).toISOString(),
    maxFailures: params.maxFailures,
  };
  const [row] = await sendStatement<SignInRow>(db, SIGN_IN_BY_CODE, values);
  if (row) return row;
  await sendStatement(db, COUNT_WRONG_CODE, {
    email: values.email,
    since: values.since,
    maxFailures: values.maxFailures,
  });
  return undefined;
}

const USE_SIGN_IN = `UPDATE sign_in_links SET used_at = :now::timestamptz
     WHERE id = :id::uuid AND used_at IS NULL AND expires_at > :now::timestamptz RETURNING id`;

/** Uses a sign-in: true for the one request that does, while it is unused and unexpired. */
export async function useSignIn(db: Queryable, params: { id: string; now: Date }): Promise<boolean> {
  const rows = await sendStatement<{ id: string }>(db, USE_SIGN_IN, { id: params.id, now: params.now.toISOString() });
  return rows.length > 0;
}

const INSERT_SIGNED_UP_USER = `WITH made AS (
       INSERT INTO users (id, email, first_name, last_name, created_at)
       VALUES (:id::uuid, :email, :firstName, :lastName, :now::timestamptz)
       ON CONFLICT (email) DO NOTHING RETURNING id)
     SELECT id FROM made UNION ALL SELECT id FROM users WHERE email = :email LIMIT 1`;

/** A user made by signing in (their own names); the existing one's id if the address has one by now. */
export async function insertSignedUpUser(
  db: Queryable,
  user: { id: string; email: string; firstName: string; lastName: string; now: Date },
): Promise<string> {
  const [row] = await sendStatement<{ id: string }>(db, INSERT_SIGNED_UP_USER, {
    ...user,
    now: user.now.toISOString(),
  });
  return row!.id;
}

const DELETE_OLD_SIGN_INS = `DELETE FROM sign_in_links WHERE id IN (
       SELECT id FROM sign_in_links WHERE created_at < :before::timestamptz ORDER BY created_at LIMIT :batch)
     RETURNING id`;

/** Deletes up to `batch` sign-ins made before `before` (long unusable); how many. */
export async function deleteOldSignIns(db: Queryable, params: { before: Date; batch: number }): Promise<number> {
  const rows = await sendStatement<{ id: string }>(db, DELETE_OLD_SIGN_INS, {
    before: params.before.toISOString(),
    batch: params.batch,
  });
  return rows.length;
}
