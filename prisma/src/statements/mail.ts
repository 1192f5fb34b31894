import type { Invitation, MailMessage, MailRecipient, Request, Tenant, User, Work } from '../generated/client';
import type { ClaimParams } from './parts';
import { type Queryable, sendStatement } from './send';

/**
 * The mail outbox (table mail_outbox) and what sending it reads and writes: emails are queued in the same statement
 * or transaction as the change that causes them, and sent by the mail sender outside the request path.
 */

/** The columns a statement that queues an email writes, in this order. */
export const MAIL_COLUMNS = 'id, kind, tenant_id, request_id, invitation_id, next_attempt_at, created_at';

/** `T` with every field possibly null: the columns of a LEFT JOIN. */
type Nullable<T> = { [K in keyof T]: T[K] | null };

/**
 * A claimed email as the claim returns it: the outbox row, and what rendering it needs, read in the same statement.
 * For a request's email (`request`, `reminder`): the request, its work's name and whether the work is discarded.
 * For an invitation's: the invitation. For a sign-in's: only `signInId` (the sender arms the sign-in). For both: the tenant's name, who is writing (the request's owner, the
 * inviter), the address's mail_recipients row (what the stop link names; null where there is none yet), and
 * whether the claim stored the answer link it made for this email (`linked`). Null where the subject is gone.
 */
export type ClaimedEmailRow = Pick<
  MailMessage,
  | 'id'
  | 'kind'
  | 'tenantId'
  | 'requestId'
  | 'invitationId'
  | 'signInId'
  | 'to'
  | 'subject'
  | 'text'
  | 'html'
  | 'attempts'
> &
  Nullable<
    Pick<
      Request,
      | 'status'
      | 'workId'
      | 'ownerId'
      | 'title'
      | 'message'
      | 'dueAt'
      | 'recipientEmail'
      | 'recipientFirstName'
      | 'recipientLastName'
    >
  > & {
    workName: Work['name'] | null;
    workDiscarded: boolean;
    invitationEmail: Invitation['email'] | null;
    invitationFirstName: Invitation['firstName'] | null;
    role: Invitation['role'] | null;
    expiresAt: Invitation['expiresAt'] | null;
    /** The tenant the email is about (the request's work's, the invitation's): its stop link names it. */
    aboutTenantId: Tenant['id'] | null;
    tenantName: Tenant['name'] | null;
    senderEmail: User['email'] | null;
    senderFirstName: User['firstName'] | null;
    senderLastName: User['lastName'] | null;
    recipientId: MailRecipient['id'] | null;
    stopped: boolean;
    linked: boolean;
    /** Its place in the claim (1-based): which of the claim's answer tokens is its own. */
    n: number;
  };

const QUEUE_DUE_REMINDERS = `WITH due AS (
         SELECT id FROM requests
         WHERE status = 'pending' AND reminded_at IS NULL AND due_at IS NOT NULL
           AND due_at > :now::timestamptz AND due_at <= :now::timestamptz + :before::interval
           AND created_at < due_at - :before::interval
           AND (:onlyTenants::uuid[] IS NULL OR work_id IN (SELECT id FROM works WHERE tenant_id = ANY (:onlyTenants::uuid[])))
         ORDER BY due_at LIMIT :batch FOR UPDATE SKIP LOCKED),
       marked AS (
         UPDATE requests r SET reminded_at = :now::timestamptz FROM due WHERE r.id = due.id RETURNING r.id, r.work_id),
       numbered AS (SELECT id, work_id, row_number() OVER () AS n FROM marked)
       INSERT INTO mail_outbox (${MAIL_COLUMNS})
       SELECT (:mailIds::uuid[])[n], 'reminder', w.tenant_id, numbered.id, NULL, :now::timestamptz, :now::timestamptz
       FROM numbered JOIN works w ON w.id = numbered.work_id
       RETURNING id`;

/**
 * Queues the one reminder of each pending request whose due date is within `before` (and still ahead), up to
 * `batch`, marking the request in the same statement: exactly once, whichever process gets there first.
 */
export const queueDueReminders = (
  db: Queryable,
  params: { now: string; before: string; batch: number; mailIds: string[]; onlyTenants: readonly string[] | null },
) => sendStatement<{ id: string }>(db, QUEUE_DUE_REMINDERS, params);

// Sign-in emails first (someone waits at the sign-in page; a bulk send queues 1,000 emails at once), each part oldest
// first, on its own partial index (migration sign_in_emails_first).
const CLAIM_DUE_EMAILS = `WITH sign_ins AS (
         SELECT id FROM mail_outbox
         WHERE status = 'queued' AND sign_in_id IS NOT NULL AND next_attempt_at <= :now::timestamptz
           AND (:onlyTenants::uuid[] IS NULL OR "to" = ANY (:onlyAddresses::text[]))
         ORDER BY next_attempt_at LIMIT :limit FOR UPDATE SKIP LOCKED),
       others AS (
         SELECT id FROM mail_outbox
         WHERE status = 'queued' AND sign_in_id IS NULL AND next_attempt_at <= :now::timestamptz
           AND (:onlyTenants::uuid[] IS NULL OR tenant_id = ANY (:onlyTenants::uuid[]))
         ORDER BY next_attempt_at LIMIT greatest(0, :limit - (SELECT count(*) FROM sign_ins))
         FOR UPDATE SKIP LOCKED),
       due AS (SELECT id FROM sign_ins UNION ALL SELECT id FROM others),
       claimed AS (
         UPDATE mail_outbox m SET attempts = m.attempts + 1, next_attempt_at = :leaseEnds::timestamptz
         FROM due WHERE m.id = due.id
         RETURNING m.id, m.kind, m.tenant_id, m.request_id, m.invitation_id, m.sign_in_id, m."to", m.subject,
                   m.text, m.html, m.attempts),
       about AS (
         SELECT c.*, (row_number() OVER (ORDER BY c.id))::int AS n, r.status, r.work_id, r.owner_id, r.title,
                r.message, r.due_at, r.recipient_email, r.recipient_first_name, r.recipient_last_name,
                r.link_generation, w.name AS work_name, w.discarded_at IS NOT NULL AS work_discarded,
                i.email AS invitation_email, i.first_name AS invitation_first_name, i.role, i.expires_at,
                coalesce(w.tenant_id, i.tenant_id) AS about_tenant_id, coalesce(r.owner_id, i.invited_by) AS sender_id,
                mr.id AS recipient_id, mr.stopped_at IS NOT NULL OR ma.stopped_at IS NOT NULL AS stopped
         FROM claimed c
         LEFT JOIN requests r ON r.id = c.request_id
         LEFT JOIN works w ON w.id = r.work_id
         LEFT JOIN invitations i ON i.id = c.invitation_id
         LEFT JOIN mail_recipients mr
           ON mr.tenant_id = coalesce(w.tenant_id, i.tenant_id)
          AND mr.email = canonical_email(coalesce(r.recipient_email, i.email))
         LEFT JOIN mail_addresses ma ON ma.email = canonical_email(coalesce(r.recipient_email, i.email))),
       linked AS (
         INSERT INTO answer_links (token_hash, request_id, generation, created_at, dev_mailbox)
         SELECT (:tokenHashes::text[])[a.n], a.request_id, a.link_generation, :madeAt::timestamptz, :devMailbox
         FROM about a
         WHERE a.status = 'pending' AND NOT a.work_discarded AND a.recipient_id IS NOT NULL AND NOT a.stopped
         RETURNING token_hash)
       SELECT a.id, a.kind, a.tenant_id AS "tenantId", a.request_id AS "requestId", a.invitation_id AS "invitationId",
              a.sign_in_id AS "signInId", a."to", a.subject, a.text, a.html, a.attempts, a.n,
              a.status::text AS status, a.work_id AS "workId", a.owner_id AS "ownerId", a.title, a.message,
              a.due_at AS "dueAt", a.recipient_email AS "recipientEmail",
              a.recipient_first_name AS "recipientFirstName", a.recipient_last_name AS "recipientLastName",
              a.work_name AS "workName", a.work_discarded AS "workDiscarded", a.invitation_email AS "invitationEmail",
              a.invitation_first_name AS "invitationFirstName", a.role::text AS role, a.expires_at AS "expiresAt",
              a.about_tenant_id AS "aboutTenantId", t.name AS "tenantName", u.email AS "senderEmail",
              u.first_name AS "senderFirstName", u.last_name AS "senderLastName", a.recipient_id AS "recipientId",
              a.stopped, EXISTS (SELECT 1 FROM linked l WHERE l.token_hash = (:tokenHashes::text[])[a.n]) AS linked
       FROM about a
       LEFT JOIN tenants t ON t.id = a.about_tenant_id
       LEFT JOIN users u ON u.id = a.sender_id`;

/**
 * Claims up to `limit` due emails with a lease (`FOR UPDATE SKIP LOCKED`), and in the same statement reads what
 * rendering each needs and stores the answer link of each request's email that will be sent.
 */
export const claimDueEmails = (
  db: Queryable,
  params: ClaimParams & {
    /** With `onlyTenants` (tests sharing a database): also the sign-in emails to these addresses. */
    onlyAddresses: readonly string[];
    tokenHashes: string[];
    madeAt: string;
    devMailbox: boolean;
  },
) => sendStatement<ClaimedEmailRow>(db, CLAIM_DUE_EMAILS, params);

const ENSURE_MAIL_RECIPIENT = `WITH made AS (
         INSERT INTO mail_recipients (tenant_id, email, id, day, sent)
         VALUES (:tenantId::uuid, canonical_email(:email), :recipientId::uuid, :day::date, 0)
         ON CONFLICT (tenant_id, email) DO NOTHING RETURNING id, stopped_at),
       everywhere AS (
         SELECT EXISTS (SELECT 1 FROM mail_addresses WHERE email = canonical_email(:email) AND stopped_at IS NOT NULL) AS stopped)
       SELECT id, stopped_at IS NOT NULL OR (SELECT stopped FROM everywhere) AS stopped FROM made
       UNION ALL
       SELECT id, stopped_at IS NOT NULL OR (SELECT stopped FROM everywhere) FROM mail_recipients
       WHERE tenant_id = :tenantId::uuid AND email = canonical_email(:email)
       LIMIT 1`;

/**
 * The address's row of the tenant (canonical address), made now if there is none; `stopped` when it stopped the
 * tenant's emails, or every email of the service.
 */
export const ensureMailRecipient = (
  db: Queryable,
  params: { tenantId: string; email: string; recipientId: string; day: string },
) => sendStatement<{ id: string; stopped: boolean }>(db, ENSURE_MAIL_RECIPIENT, params);

const INSERT_ANSWER_LINK = `INSERT INTO answer_links (token_hash, request_id, generation, created_at, dev_mailbox)
       SELECT :tokenHash, r.id, r.link_generation, :madeAt::timestamptz, :devMailbox FROM requests r
       WHERE r.id = :requestId::uuid AND r.status = 'pending'
       RETURNING generation`;

/** Stores an answer link with the request's current link generation, if the request is still pending. */
export const insertAnswerLink = (
  db: Queryable,
  params: { tokenHash: string; requestId: string | null; madeAt: string; devMailbox: boolean },
) => sendStatement<{ generation: number }>(db, INSERT_ANSWER_LINK, params);

const RECORD_EMAIL_OUTCOMES = `WITH outcome AS (
           SELECT * FROM unnest(:mailIds::uuid[], :statuses::text[], :errors::text[], :retryAts::timestamptz[],
                                :emailsStopped::boolean[], :ats::timestamptz[])
             AS o(id, status, error, retry_at, emails_stopped, at)),
         recorded AS (
           UPDATE mail_outbox m
           SET status = CASE WHEN o.status = 'retry' THEN m.status ELSE o.status::mail_status END,
               next_attempt_at = o.retry_at, last_error = o.error,
               sent_at = CASE WHEN o.status = 'sent' THEN o.at END
           FROM outcome o WHERE m.id = o.id AND m.status = 'queued'
           RETURNING m.request_id, m.created_at, m.id, o.status, o.error, o.emails_stopped, o.at),
         latest AS (
           SELECT DISTINCT ON (request_id) * FROM recorded
           WHERE request_id IS NOT NULL AND status <> 'retry'
           ORDER BY request_id, created_at DESC, id DESC)
         UPDATE requests r
         SET email_status = l.status::mail_status,
             email_sent_at = CASE WHEN l.status = 'sent' THEN l.at ELSE r.email_sent_at END,
             email_failure = l.error,
             emails_stopped = r.emails_stopped OR l.emails_stopped
         FROM latest l WHERE r.id = l.request_id`;

/**
 * The outcomes of several emails in one statement: each email's state (a retry stays queued, due again later), and
 * the `emailDelivery` of each request whose email that was, unless a resend replaced it meanwhile. Not prepared: a
 * generic plan made while few emails are queued reads every queued one through the partial index to find these
 * few; planned for each call, it looks them up by key once the queue is long.
 */
export const recordEmailOutcomes = (
  db: Queryable,
  params: {
    mailIds: string[];
    statuses: string[];
    errors: (string | null)[];
    retryAts: (string | null)[];
    emailsStopped: boolean[];
    ats: string[];
  },
) => sendStatement(db, RECORD_EMAIL_OUTCOMES, params);
