import type { Request } from '../generated/client';
import type { OutcomeStatement } from './idempotency';
import { MAIL_COLUMNS } from './mail';
import { MAIL_ALLOWANCE_CALL as ALLOWANCE_CALL, type mailAllowanceParams } from './mail-recipients';
import {
  memberMaySql,
  OUTBOX_COLUMNS,
  OUTBOX_PARAMS,
  type OutboxEventRow,
  outboxParams,
  outboxParamsWith,
  type OwnerColumns,
  ownerColumns,
} from './parts';
import { type Queryable, sendStatement } from './send';

/** The values `take_mail_allowance` takes (mail-recipients.ts). */
type AllowanceParams = ReturnType<typeof mailAllowanceParams>;

/** A new request's columns, as `insertRequest` writes them. */
export interface InsertRequestParams {
  requestId: string;
  workId: string;
  tenantId: string;
  title: string;
  message: string;
  recipientEmail: string;
  recipientFirstName: string;
  recipientLastName: string;
  dueAt: string | null;
  ownerId: string;
  now: string;
  mailId: string;
  search: string;
  /** The email failure a request to an address that stopped the tenant's emails shows. */
  emailsStoppedFailure: string;
  /** The webhook body when the address stopped the tenant's emails (the outbox row's body otherwise). */
  stoppedBody: string;
}

/** What `insertRequest` is composed of besides the row: the caller's access, the event, the email, the key. */
export interface InsertRequestParts {
  /** The roles that may send a request: the caller must hold one in the tenant. */
  allowedRoles: readonly string[];
  outbox: OutboxEventRow;
  allowance: AllowanceParams;
  /** The Idempotency-Key's parts (idempotency.ts), or `NO_OUTCOME`. */
  key: OutcomeStatement;
}

/**
 * Inserts a request: ONE statement, so one round trip and atomic. The work is read kept and in the tenant, locked
 * FOR SHARE (a concurrent discard either makes it find nothing or waits for the insert); the caller's membership is
 * a condition; the email takes its place under the daily caps (over one, `take_mail_allowance` raises and nothing is
 * written); the work's count, the mail outbox row, the webhook event and the key's result are written with it.
 * Returns one row (`stopped`: the address stopped the tenant's emails) or none (no access, no kept work, or the
 * key's guard). Prepared: by keys only, the same text every call, so PostgreSQL plans it once per connection.
 */
export function insertRequest(db: Queryable, params: InsertRequestParams, parts: InsertRequestParts) {
  const { key } = parts;
  return sendStatement<{ stopped: boolean }>(
    db,
    `WITH ${key.lockHeldKey}
       work AS (
         SELECT w.id FROM works w
         WHERE w.id = :workId::uuid AND w.tenant_id = :tenantId::uuid AND w.discarded_at IS NULL
           AND ${memberMaySql(parts.allowedRoles, ':tenantId', ':ownerId')} AND ${key.guard}
         FOR SHARE),
       allowance AS (SELECT ${ALLOWANCE_CALL} AS stopped FROM work),
       created AS (
         INSERT INTO requests (id, work_id, title, message, recipient_email, recipient_first_name,
                               recipient_last_name, due_at, owner_id, created_at, updated_at, email_status,
                               email_failure, emails_stopped, tenant_id, search)
         SELECT :requestId::uuid, work.id, :title, :message, :recipientEmail, :recipientFirstName,
                :recipientLastName, :dueAt::timestamptz, :ownerId::uuid, :now::timestamptz, :now::timestamptz,
                CASE WHEN a.stopped THEN 'dropped' ELSE 'queued' END::mail_status,
                CASE WHEN a.stopped THEN :emailsStoppedFailure END, a.stopped, :tenantId::uuid, :search
         FROM work, allowance a
         RETURNING id, emails_stopped)${key.recordResult('created')},
       -- Counted here, pending in the work's count slot of this session (see counts.ts), only when inserted.
       counted AS (
         INSERT INTO work_counts AS c (work_id, slot, pending)
         SELECT :workId::uuid, counter_slot(), 1 FROM created
         ON CONFLICT (work_id, slot) DO UPDATE SET pending = c.pending + 1),
       mailed AS (
         INSERT INTO mail_outbox (${MAIL_COLUMNS})
         SELECT :mailId::uuid, 'request', :tenantId::uuid, id, NULL, :now::timestamptz, :now::timestamptz FROM created
         WHERE NOT emails_stopped)
       INSERT INTO webhook_events (${OUTBOX_COLUMNS})
       SELECT ${outboxParamsWith({ body: 'CASE WHEN created.emails_stopped THEN :stoppedBody ELSE :outboxBody::text END' })}
       FROM created RETURNING (SELECT emails_stopped FROM created) AS stopped`,
    { ...params, ...outboxParams(parts.outbox), ...parts.allowance, ...key.params },
    { prepared: true },
  );
}

/** The columns of a request row as the generated `Request` names them (`r` is requests, `o` its owner). */
const REQUEST_ROW_COLUMNS = `r.id, r.work_id AS "workId", r.status::text AS status, r.title, r.message,
  r.recipient_email AS "recipientEmail", r.recipient_first_name AS "recipientFirstName",
  r.recipient_last_name AS "recipientLastName", r.answer, r.validation::text AS validation,
  r.cancel_reason AS "cancelReason", r.due_at AS "dueAt", r.owner_id AS "ownerId", r.created_at AS "createdAt",
  r.updated_at AS "updatedAt", r.confirmed_at AS "confirmedAt", r.validated_at AS "validatedAt",
  r.cancelled_at AS "cancelledAt", r.email_status::text AS "emailStatus", r.email_sent_at AS "emailSentAt",
  r.email_failure AS "emailFailure", r.reminded_at AS "remindedAt", r.link_generation AS "linkGeneration",
  r.resend_count AS "resendCount", r.last_resent_at AS "lastResentAt", r.emails_stopped AS "emailsStopped",
  r.confirmed_through_dev_mailbox AS "confirmedThroughDevMailbox", r.tenant_id AS "tenantId", r.search,
  ${ownerColumns('o')}, w.discarded_at AS "workDiscardedAt"`;

/** A request as `findRequestForMember` reads it, with the caller's role in its tenant (null: not a member). */
export type RequestReadRow = Omit<Request, 'searchPrefixes'> &
  OwnerColumns & {
    callerRole: 'owner' | 'admin' | 'member' | null;
    workDiscardedAt: Date | null;
  };

const FIND_REQUEST_FOR_MEMBER = `SELECT m.role::text AS "callerRole", ${REQUEST_ROW_COLUMNS}
     FROM (SELECT) AS one
     LEFT JOIN memberships m ON m.tenant_id = :tenantId::uuid AND m.user_id = :userId::uuid
     LEFT JOIN (requests r JOIN works w ON w.id = r.work_id JOIN users o ON o.id = r.owner_id)
       ON r.id = :requestId::uuid AND r.work_id = :workId::uuid AND w.tenant_id = :tenantId::uuid`;

/**
 * The caller's membership and the request (with its owner and its work's discard), each on its own side of a join
 * that always returns one row: one round trip for the check and the read.
 */
export async function findRequestForMember(
  db: Queryable,
  params: { tenantId: string; userId: string; requestId: string; workId: string },
): Promise<RequestReadRow | undefined> {
  const [row] = await sendStatement<RequestReadRow>(db, FIND_REQUEST_FOR_MEMBER, params, { prepared: true });
  return row;
}

/** What a transition writes besides its status: its time stamp, a validation, a note (state-machine.ts). */
export interface TransitionChanges {
  stamp: 'confirmedAt' | 'validatedAt' | 'cancelledAt';
  validation?: string | undefined;
  note?: 'answer' | 'cancelReason' | undefined;
}

const columnOf = {
  confirmedAt: 'confirmed_at',
  validatedAt: 'validated_at',
  cancelledAt: 'cancelled_at',
  answer: 'answer',
  cancelReason: 'cancel_reason',
} as const;

/** The changes as columns of the UPDATE: `:now` is the time of the action, `:note` its note. */
function changedColumns({ stamp, validation, note }: TransitionChanges): string {
  return [
    `${columnOf[stamp]} = :now::timestamptz`,
    ...(validation ? [`validation = '${validation}'`] : []),
    ...(note ? [`${columnOf[note]} = :note::text`] : []),
  ].join(', ');
}

/** A transition's values (`applyRequestTransition`). */
export interface TransitionParams {
  requestId: string;
  workId: string;
  from: string;
  to: string;
  /** The updatedAt the transition was decided on: the update applies only while the row still has it. */
  readUpdatedAt: string;
  now: string;
  note: string | null;
  eventId: string;
  action: string;
  actorId: string | null;
  actorType: 'user' | 'recipient';
  throughDevMailbox: boolean;
}

/**
 * A transition, its request event and its webhook outbox row, in one statement; or nothing, when the request
 * changed or its work was discarded since it was read. Returns the outbox row's id when it applied.
 */
export function applyRequestTransition(
  db: Queryable,
  params: TransitionParams,
  parts: { changes: TransitionChanges; outbox: OutboxEventRow },
) {
  return sendStatement<{ id: string }>(
    db,
    `WITH changed AS (
         UPDATE requests r SET status = :to::request_status, updated_at = :now::timestamptz, ${changedColumns(parts.changes)},
                               confirmed_through_dev_mailbox = r.confirmed_through_dev_mailbox OR :throughDevMailbox
         WHERE r.id = :requestId::uuid AND r.work_id = :workId::uuid AND r.status = :from::request_status
           AND r.updated_at = :readUpdatedAt::timestamptz
           AND EXISTS (SELECT 1 FROM works w WHERE w.id = r.work_id AND w.discarded_at IS NULL)
         RETURNING r.id),
       transition AS (
         INSERT INTO request_events (id, request_id, action, from_status, to_status, actor_id, actor_type,
                                     through_dev_mailbox, note, created_at)
         SELECT :eventId::uuid, id, :action::request_action, :from::request_status, :to::request_status, :actorId::uuid,
                :actorType::actor_type, :throughDevMailbox, :note::text, :now::timestamptz
         FROM changed)
       INSERT INTO webhook_events (${OUTBOX_COLUMNS}) SELECT ${OUTBOX_PARAMS} FROM changed RETURNING id`,
    { ...params, ...outboxParams(parts.outbox) },
    { prepared: true },
  );
}

/** A resend's values (`resendRequestEmail`). */
export interface ResendParams {
  requestId: string;
  workId: string;
  tenantId: string;
  mailId: string;
  now: string;
  resendsPerRequest: number;
  /** The cooldown between resends, as an interval (`600 seconds`). */
  cooldown: string;
}

/**
 * A resend in one statement: a new link generation, queued emails dropped, one new email queued under the daily
 * caps, all only while the request is pending, within the resend limits and its work kept. Returns one row
 * (`stopped`: the address stopped the tenant's emails; `queued`: emails queued) or none when it changed meanwhile.
 */
export function resendRequestEmail(db: Queryable, params: ResendParams, allowance: AllowanceParams) {
  return sendStatement<{ stopped: boolean; queued: number }>(
    db,
    `WITH target AS (
         SELECT r.id, r.recipient_email FROM requests r
         WHERE r.id = :requestId::uuid AND r.work_id = :workId::uuid AND r.status = 'pending'
           AND r.resend_count < :resendsPerRequest
           AND (r.last_resent_at IS NULL OR r.last_resent_at <= :now::timestamptz - :cooldown::interval)
           AND EXISTS (SELECT 1 FROM works w WHERE w.id = r.work_id AND w.discarded_at IS NULL)
         FOR UPDATE),
       allowance AS (SELECT id, ${ALLOWANCE_CALL} AS stopped FROM target),
       changed AS (
         UPDATE requests r SET link_generation = r.link_generation + 1, email_status = 'queued', email_failure = NULL,
                               resend_count = r.resend_count + 1, last_resent_at = :now::timestamptz,
                               emails_stopped = false
         FROM allowance a WHERE r.id = a.id AND NOT a.stopped
         RETURNING r.id),
       marked AS (
         UPDATE requests r SET emails_stopped = true FROM allowance a WHERE r.id = a.id AND a.stopped),
       dropped AS (
         UPDATE mail_outbox SET status = 'dropped', next_attempt_at = NULL
         WHERE request_id IN (SELECT id FROM changed) AND status = 'queued'),
       queued AS (
         INSERT INTO mail_outbox (${MAIL_COLUMNS})
         SELECT :mailId::uuid, 'request', :tenantId::uuid, id, NULL, :now::timestamptz, :now::timestamptz
         FROM changed RETURNING id)
       SELECT a.stopped, (SELECT count(*) FROM queued)::int AS queued FROM allowance a`,
    { ...params, ...allowance },
    { prepared: true },
  );
}
