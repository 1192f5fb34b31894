import { futureDateTime, parseDateTime } from '../dates';
import type { Db } from '@works-api/prisma';
import { countRequestsOf } from '@works-api/prisma';
import type { Prisma, WebhookEvent } from '@works-api/prisma/client';
import { isId, newId } from '@works-api/prisma';
import { type KeyOutcome, KeyHoldLost, outcomeStatement } from '@works-api/prisma';
import { preparedQuery } from '@works-api/prisma';
import { type Actor, authorize, memberMaySql, type Permission, requirePermission, type Role } from '../access';
import { notFound, ProblemError } from '../errors';
import { newestFirst, type Page, type PageRequest, readPage } from '../paging';
import { checkPrecondition, type Precondition } from '../preconditions';
import type { Schemas } from '../schemas';
import {
  normalizeEmail,
  normalizeName,
  type OwnerColumns,
  ownerColumns,
  ownerRecord,
  presentUserRecord,
  userRecord,
} from '../users/present';
import {
  OUTBOX_COLUMNS,
  OUTBOX_PARAMS,
  outboxBody,
  outboxParams,
  outboxParamsWith,
  outboxRow,
} from '../webhooks/events';
import { findWork, workDiscarded } from '../works/works';
import { requestSearchText, searchSql, searchWhere } from '../search/fold';
import { readMemberPage } from '../member-page';
import { MAIL_COLUMNS } from '../mail-outbox';
import { DEFAULT_LIMITS, type Limits } from '../limits';
import { ALLOWANCE_CALL, allowanceParams, EMAILS_STOPPED, type MailCaps, mailCapRefusal } from '../mail-caps';
import {
  type ActionDefinition,
  allowedActions,
  decide,
  type RequestAction,
  requestActions,
  type RequestStatus,
} from './state-machine';

const withOwner = { owner: userRecord } as const;

/** A request as read with its owner; also what a request written in this module is presented from. */
// Without the search prefixes, which no read returns (see the client's `omit`).
type RequestRow = Omit<Prisma.RequestGetPayload<{ include: typeof withOwner }>, 'searchPrefixes'>;

const iso = (date: Date | null): string | null => date?.toISOString() ?? null;

/** What `presentRequest` reads of a request. */
type PresentedRequestRow = Pick<
  RequestRow,
  | 'id'
  | 'workId'
  | 'status'
  | 'title'
  | 'message'
  | 'recipientEmail'
  | 'recipientFirstName'
  | 'recipientLastName'
  | 'answer'
  | 'validation'
  | 'cancelReason'
  | 'dueAt'
  | 'owner'
  | 'createdAt'
  | 'updatedAt'
  | 'confirmedAt'
  | 'validatedAt'
  | 'cancelledAt'
  | 'emailStatus'
  | 'emailSentAt'
  | 'emailFailure'
  | 'emailsStopped'
  | 'confirmedThroughDevMailbox'
>;

// (Partial<RequestRow>: a caller may pass a whole row, and name fields this does not read.)
export const presentRequest = (request: PresentedRequestRow & Partial<RequestRow>): Schemas['Request'] => ({
  id: request.id,
  workId: request.workId,
  status: request.status,
  title: request.title,
  message: request.message,
  recipient: {
    email: request.recipientEmail,
    firstName: request.recipientFirstName,
    lastName: request.recipientLastName,
  },
  answer: request.answer,
  validation: request.validation,
  cancelReason: request.cancelReason,
  dueAt: iso(request.dueAt),
  owner: presentUserRecord(request.owner),
  createdAt: request.createdAt.toISOString(),
  updatedAt: request.updatedAt.toISOString(),
  confirmedAt: iso(request.confirmedAt),
  validatedAt: iso(request.validatedAt),
  cancelledAt: iso(request.cancelledAt),
  emailDelivery: presentEmailDelivery(request),
  emailsStopped: request.emailsStopped,
  confirmedThroughDevMailbox: request.confirmedThroughDevMailbox,
});

function presentEmailDelivery(request: PresentedRequestRow): Schemas['EmailDelivery'] | null {
  if (request.emailStatus === null) return null;
  return {
    status: request.emailStatus,
    lastSentAt: iso(request.emailSentAt),
    failure: request.emailFailure,
  };
}

export interface RequestRef {
  tenantId: string;
  workId: string;
  requestId: string;
}

/**
 * Sends a request: one statement, so one round trip and atomic. The work is read kept and in the tenant, locked FOR
 * SHARE: a concurrent discard that commits first makes it find nothing (PostgreSQL re-checks the locked row), and
 * one that comes later waits for the insert, so no request lands in a work after its discard. The email takes its
 * place under the tenant's daily caps in the same statement (over one, the statement aborts: 429, nothing created);
 * to an address that stopped the tenant's emails, the request is created without one (`emailsStopped`). The
 * caller's membership is a condition of the statement (see `memberMaySql`); with `outcome` (an Idempotency-Key),
 * the key's outcome is written in it too.
 */
export async function createRequest(
  db: Db,
  actor: Actor,
  tenantId: string,
  workId: string,
  input: Schemas['CreateRequestBody'],
  caps: MailCaps = DEFAULT_LIMITS,
  outcome?: KeyOutcome<Schemas['Request']>,
) {
  const now = new Date();
  const dueAt = input.dueAt === undefined ? null : futureDateTime(input.dueAt, '/body/dueAt', now);
  if (!isId(tenantId)) throw notFound('tenant');
  if (!isId(workId)) {
    await authorize(db, actor, tenantId, 'sendRequest');
    throw notFound('work');
  }
  // The row as the INSERT below writes it, defaults included, for an address that takes emails.
  const request = {
    id: newId(),
    workId,
    status: 'pending',
    title: normalizeName(input.title),
    message: input.message ?? '',
    recipientEmail: normalizeEmail(input.recipient.email),
    recipientFirstName: normalizeName(input.recipient.firstName ?? ''),
    recipientLastName: normalizeName(input.recipient.lastName ?? ''),
    answer: null,
    validation: null,
    cancelReason: null,
    dueAt,
    createdAt: now,
    updatedAt: now,
    confirmedAt: null,
    validatedAt: null,
    cancelledAt: null,
    emailStatus: 'queued',
    emailSentAt: null,
    emailFailure: null,
    remindedAt: null,
    linkGeneration: 0,
    resendCount: 0,
    lastResentAt: null,
    emailsStopped: false,
    confirmedThroughDevMailbox: false,
    ownerId: actor.userId,
    tenantId,
    search: '',
    // The owner is the caller, whom authentication already read (see createWork).
    owner: actor.user,
  } satisfies RequestRow;
  request.search = requestSearchText(request);
  const taking = presentRequest(request);
  // And as it is written when the address stopped the tenant's emails (emailStatus `dropped` with EMAILS_STOPPED,
  // emailsStopped): the statement picks one by the allowance. Presented once, the other one its two fields changed.
  const presented = {
    taking,
    stopped: {
      ...taking,
      emailDelivery: { status: 'dropped', lastSentAt: null, failure: EMAILS_STOPPED },
      emailsStopped: true,
    } satisfies Schemas['Request'],
  };
  const event = outboxRow('request.created', tenantId, { request: presented.taking }, now, { orderingKey: request.id });
  const stoppedBody = outboxBody(event as typeof event & { type: 'request.created' }, { request: presented.stopped });
  const key = outcomeStatement(outcome, presented.taking, { when: 'emails_stopped', created: presented.stopped });
  let inserted: Array<{ stopped: boolean }>;
  try {
    // Prepared: the same statement on every call, by keys only, whose planning was a third of its cost.
    inserted = await preparedQuery<{ stopped: boolean }>(
      db,
      `WITH ${key.first}
       work AS (
         SELECT w.id FROM works w
         WHERE w.id = :workId::uuid AND w.tenant_id = :tenantId::uuid AND w.discarded_at IS NULL
           AND ${memberMaySql('sendRequest', ':tenantId', ':ownerId')} AND ${key.guard}
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
         RETURNING id, emails_stopped)${key.last('created')},
       -- Counted here, pending in the work's count slot of this session (see prisma/src/counts.ts), only when
       -- inserted: cheaper than the insert trigger this replaced (migration requests_counted_by_their_creation).
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
      {
        ...{ requestId: request.id, workId, title: request.title, message: request.message },
        ...{ recipientEmail: request.recipientEmail, recipientFirstName: request.recipientFirstName },
        ...{ recipientLastName: request.recipientLastName, dueAt: request.dueAt?.toISOString() ?? null },
        ...{ ownerId: actor.userId, now: now.toISOString(), tenantId, mailId: newId() },
        ...{ stoppedBody, emailsStoppedFailure: EMAILS_STOPPED, search: request.search },
        ...outboxParams(event),
        ...allowanceParams(tenantId, actor.userId, request.recipientEmail, caps, now),
        ...key.params,
      },
    );
  } catch (error) {
    throw mailCapRefusal(error, caps, now) ?? error;
  }
  if (inserted.length === 0) {
    // Nothing inserted: the caller may not (404, 403), the work is missing (404) or discarded (409), or the key's
    // guard stopped it.
    await authorize(db, actor, tenantId, 'sendRequest');
    const work = await findWork(db, tenantId, workId);
    throw outcome && !work.discardedAt ? new KeyHoldLost() : workDiscarded();
  }
  db.outbox.webhooks.signal();
  if (inserted[0]!.stopped) return presented.stopped;
  db.outbox.mail.signal();
  return presented.taking;
}

export async function listRequests(
  db: Db,
  actor: Actor,
  tenantId: string,
  workId: string,
  request: PageRequest & { status?: RequestStatus; q?: string },
) {
  const search = request.q === undefined ? undefined : searchWhere(request.q);
  await authorize(db, actor, tenantId, 'readTenant');
  await findWork(db, tenantId, workId);
  const { status } = request;
  // With a search, the tenant too: the prefix index is (tenant_id, search_prefixes).
  const filter = { workId, ...(status && { status }), ...(search && { tenantId, ...search }) };
  return readPage(request, {
    // By (work_id, id), or (work_id, status, id) with a status.
    rows: (page: Page) => {
      const { where, ...window } = newestFirst(page, 'id');
      return db.prisma.request.findMany({ where: { ...filter, ...where }, include: withOwner, ...window });
    },
    ...(search
      ? // Newest first, like the page: the same choice between the work's index and the prefix index.
        { capped: (take: number) => db.prisma.request.count({ where: filter, orderBy: { id: 'desc' }, take }) }
      : { totalCount: () => countRequestsOf(db, workId, status) }),
    present: presentRequest,
  });
}

/** The filters of the tenant-wide request list, as the contract names them (statuses as a comma-separated list). */
export interface TenantRequestsQuery extends PageRequest {
  status?: string;
  recipient?: string;
  workId?: string;
  dueBefore?: string;
  dueAfter?: string;
  q?: string;
}

/**
 * Every request in the tenant's kept works, newest first: what any member may read request by request, in one
 * list. Read by the tenant's own indexes on requests ((tenant_id, id), (tenant_id, status, id), (tenant_id,
 * recipient_email, id), the prefix index (tenant_id, search_prefixes), and (tenant_id, id) of the requests with a due
 * date), each row checked against its work (kept) by primary key; its count is capped (COUNT_CAP), since no count of
 * it is kept. One statement with the caller's membership and the count (see `readMemberPage`).
 */
export async function listTenantRequests(db: Db, actor: Actor, tenantId: string, query: TenantRequestsQuery) {
  const filter = tenantRequestsFilter(query);
  // One status: its index gives the order. Several: a walk newest first that filters them (an IN list on the
  // status index would come in status order, and read the statuses not asked for before the first it finds).
  const byStatus = query.status !== undefined && !query.status.includes(',');
  const countOrder =
    query.q !== undefined
      ? // A search counts newest first, like its page: PostgreSQL chooses the prefix index or a walk for both.
        'r.id DESC'
      : query.workId !== undefined
        ? byStatus
          ? 'r.work_id DESC, r.status DESC, r.id DESC'
          : 'r.work_id DESC, r.id DESC'
        : query.recipient !== undefined
          ? 'r.tenant_id DESC, r.recipient_email DESC, r.id DESC'
          : byStatus
            ? 'r.tenant_id DESC, r.status DESC, r.id DESC'
            : 'r.tenant_id DESC, r.id DESC';
  return readMemberPage(db, actor, query, {
    tenantId,
    permission: 'readTenant',
    columns: REQUEST_COLUMNS,
    from: 'requests r JOIN works w ON w.id = r.work_id JOIN users u ON u.id = r.owner_id',
    countFrom: 'requests r JOIN works w ON w.id = r.work_id',
    key: 'r.id',
    where: filter.where,
    params: filter.params,
    countOrder,
    present: presentRequestColumns,
  });
}

/** A request with its owner as `REQUEST_COLUMNS` reads it (r: the request, u: its owner). */
const REQUEST_COLUMNS = `r.id, r.work_id AS "workId", r.status::text AS status, r.title, r.message,
  r.recipient_email AS "recipientEmail", r.recipient_first_name AS "recipientFirstName",
  r.recipient_last_name AS "recipientLastName", r.answer, r.validation::text AS validation,
  r.cancel_reason AS "cancelReason", r.due_at AS "dueAt", r.created_at AS "createdAt", r.updated_at AS "updatedAt",
  r.confirmed_at AS "confirmedAt", r.validated_at AS "validatedAt", r.cancelled_at AS "cancelledAt",
  r.email_status::text AS "emailStatus", r.email_sent_at AS "emailSentAt", r.email_failure AS "emailFailure",
  r.emails_stopped AS "emailsStopped", r.confirmed_through_dev_mailbox AS "confirmedThroughDevMailbox",
  ${ownerColumns('u')}`;

type RequestColumns = Omit<PresentedRequestRow, 'owner'> & OwnerColumns;

const presentRequestColumns = (row: RequestColumns): Schemas['Request'] =>
  presentRequest({ ...row, owner: ownerRecord(row) });

/**
 * The tenant-wide request list's filter, SQL over `r` (the request) and `w` (its work); bad input is a 400 naming
 * the parameter.
 */
function tenantRequestsFilter(query: TenantRequestsQuery): { where: string; params: Record<string, unknown> } {
  const statuses = query.status === undefined ? undefined : ([...new Set(query.status.split(','))] as RequestStatus[]);
  const recipient = query.recipient === undefined ? undefined : normalizeEmail(query.recipient);
  // Checked by the validator (format date-time is `isRealDateTime`, which reads what parseDateTime reads).
  const dueBefore = query.dueBefore === undefined ? undefined : parseDateTime(query.dueBefore);
  const dueAfter = query.dueAfter === undefined ? undefined : parseDateTime(query.dueAfter);
  const search = query.q === undefined ? undefined : searchSql(query.q, 'r');
  const where = ['r.tenant_id = :tenantId::uuid', 'w.discarded_at IS NULL'];
  const params: Record<string, unknown> = {};
  if (statuses?.length === 1) {
    where.push('r.status = :status::request_status');
    params.status = statuses[0];
  } else if (statuses) {
    where.push('r.status = ANY(:statuses::request_status[])');
    params.statuses = statuses;
  }
  if (recipient !== undefined) {
    where.push('r.recipient_email = :recipient');
    params.recipient = recipient;
  }
  if (query.workId !== undefined) {
    // An id we never issue names no work (and must not reach the uuid column).
    if (isId(query.workId)) {
      where.push('r.work_id = :workId::uuid');
      params.workId = query.workId;
    } else where.push('FALSE');
  }
  if (dueBefore) {
    where.push('r.due_at < :dueBefore::timestamptz');
    params.dueBefore = dueBefore.toISOString();
  }
  if (dueAfter) {
    where.push('r.due_at > :dueAfter::timestamptz');
    params.dueAfter = dueAfter.toISOString();
  }
  if (search) {
    where.push(search.where);
    Object.assign(params, search.params);
  }
  return { where: where.join(' AND '), params };
}

/**
 * A request of a work of the tenant, with whether that work is discarded, in one query; or 404 for the work when
 * the work is what is missing, else for the request.
 */
export async function findRequest(db: Db, { tenantId, workId, requestId }: RequestRef) {
  const request =
    isId(requestId) && isId(workId)
      ? await db.prisma.request.findFirst({
          where: { id: requestId, workId, work: { tenantId } },
          include: { ...withOwner, work: { select: { discardedAt: true } } },
        })
      : null;
  if (request) return request;
  await findWork(db, tenantId, workId);
  throw notFound('request');
}

/** A request as `findRequest` reads it: with its owner and whether its work is discarded. */
export type FoundRequest = RequestRow & { work: { discardedAt: Date | null } };

/** The columns of a request row as `RequestRow` names them (`r` is requests, `o` its owner). */
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

type RequestReadRow = Omit<FoundRequest, 'owner' | 'work'> &
  OwnerColumns & {
    callerRole: Role | null;
    workDiscardedAt: Date | null;
  };

/**
 * `authorize` and `findRequest` in one statement, one round trip instead of two: the caller's membership and the
 * request (with its owner and its work's discard), each on its own side of a join that always returns one row. The
 * answers are those of the two in turn: 404 for the tenant (not a member), 403 (role too low), then 404 for the work
 * or the request.
 */
export async function findRequestAs(db: Db, actor: Actor, permission: Permission, ref: RequestRef) {
  const { tenantId, workId, requestId } = ref;
  if (!isId(tenantId) || !isId(workId) || !isId(requestId)) {
    await authorize(db, actor, tenantId, permission);
    return findRequest(db, ref);
  }
  const [row] = await preparedQuery<RequestReadRow>(
    db,
    `SELECT m.role::text AS "callerRole", ${REQUEST_ROW_COLUMNS}
     FROM (SELECT) AS one
     LEFT JOIN memberships m ON m.tenant_id = :tenantId::uuid AND m.user_id = :userId::uuid
     LEFT JOIN (requests r JOIN works w ON w.id = r.work_id JOIN users o ON o.id = r.owner_id)
       ON r.id = :requestId::uuid AND r.work_id = :workId::uuid AND w.tenant_id = :tenantId::uuid`,
    { tenantId, userId: actor.userId, requestId, workId },
  );
  if (!row?.callerRole) throw notFound('tenant');
  requirePermission({ tenantId, role: row.callerRole }, permission);
  if (row.id === null) {
    await findWork(db, tenantId, workId);
    throw notFound('request');
  }
  const { callerRole: _role, ownerFirstName: _f, ownerLastName: _l, ownerEmail: _e, workDiscardedAt, ...request } = row;
  return {
    ...request,
    owner: ownerRecord(row),
    work: { discardedAt: workDiscardedAt },
  } as FoundRequest;
}

export async function getRequest(db: Db, actor: Actor, ref: RequestRef) {
  return presentRequest(await findRequestAs(db, actor, 'readTenant', ref));
}

export async function listRequestEvents(db: Db, actor: Actor, ref: RequestRef, pageRequest: PageRequest) {
  const request = await findRequestAs(db, actor, 'readTenant', ref);
  const where = { requestId: ref.requestId };
  // The recipient has no user: their events show the request's recipient.
  const recipient = {
    email: request.recipientEmail,
    firstName: request.recipientFirstName,
    lastName: request.recipientLastName,
  };
  return readPage(pageRequest, {
    rows: (page: Page) => {
      const window = newestFirst(page, 'id');
      return db.prisma.requestEvent.findMany({
        ...window,
        where: { ...where, ...window.where },
        include: { actor: userRecord },
      });
    },
    // No kept count: the state machine bounds a request's events (at most two transitions, then a final state),
    // so this count reads a handful of index entries.
    totalCount: () => db.prisma.requestEvent.count({ where }),
    present: (event) => ({
      id: event.id,
      action: event.action,
      fromStatus: event.fromStatus,
      toStatus: event.toStatus,
      actor: presentUserRecord(event.actor ?? recipient),
      actorType: event.actorType,
      throughDevMailbox: event.throughDevMailbox,
      note: event.note,
      createdAt: event.createdAt.toISOString(),
    }),
  });
}

/** What an action writes on the request besides its status (and `updatedAt`), as `requestActions` says. */
function changesOf(action: RequestAction, note: string | undefined, now: Date) {
  const { stamp, validation, note: noteInto } = requestActions[action] as ActionDefinition;
  return {
    [stamp]: now,
    ...(validation && { validation }),
    ...(noteInto && { [noteInto]: note ?? null }),
  } as Partial<Pick<RequestRow, ActionDefinition['stamp'] | NonNullable<ActionDefinition['note']> | 'validation'>>;
}

/** The columns of the fields an action writes. */
const columnOf = {
  confirmedAt: 'confirmed_at',
  validatedAt: 'validated_at',
  cancelledAt: 'cancelled_at',
  answer: 'answer',
  cancelReason: 'cancel_reason',
} as const satisfies Record<ActionDefinition['stamp'] | NonNullable<ActionDefinition['note']>, string>;

/** The same changes as columns of the UPDATE below: `:now` is the time of the action, `:note` its note. */
function changedColumns(action: RequestAction): string {
  const { stamp, validation, note } = requestActions[action] as ActionDefinition;
  return [
    `${columnOf[stamp]} = :now::timestamptz`,
    ...(validation ? [`validation = '${validation}'`] : []),
    ...(note ? [`${columnOf[note]} = :note::text`] : []),
  ].join(', ');
}

// A transition loses a race only to another transition, and a request makes at most three; this bounds retries.
const MAX_TRANSITION_ATTEMPTS = 4;

/**
 * Applies one of the four actions. The update is conditional on the row just read (its status and updatedAt)
 * and on the work still being kept, so of two concurrent conflicting actions exactly one wins; the loser reads
 * again and gets a repeat (200, unchanged) or a conflict (409). An `If-Match` precondition is checked against
 * that same read, so it holds for the row the update applies to (or the loser gets 412).
 */
export async function actOnRequest(db: Db, actor: Actor, transition: Transition) {
  const current = await findRequestAs(db, actor, 'actOnRequest', transition.ref);
  return applyAction(db, { ...transition, by: { type: 'user', userId: actor.userId } }, current);
}

/** One action on one request: its answer or reason (`note`), and the caller's `If-Match` if any. */
export interface Transition {
  ref: RequestRef;
  action: RequestAction;
  note?: string | undefined;
  precondition?: Precondition<Schemas['Request']> | undefined;
}

/**
 * Who a transition is recorded as done by: a member, or the recipient through their answer link; through a link the
 * dev mailbox kept (`throughDevMailbox`), which the tenant's members could read too, so it is marked as such.
 */
export type EventActor = { type: 'user'; userId: string } | { type: 'recipient'; throughDevMailbox: boolean };

/**
 * The one place a transition is applied, for members (`actOnRequest`, after authorization) and for the recipient
 * (domain/recipients): the same statement, the same event and webhook, whoever acts.
 */
export async function applyAction(
  db: Db,
  transition: Transition & {
    /** Who the event records. */
    by: EventActor;
    /** A repeat of the action answers 409 instead of 200 unchanged (the recipient's link acts once). */
    repeatIsConflict?: boolean;
  },
  /** The request as the caller just read it (`findRequestAs`), for the first attempt. */
  read?: FoundRequest,
) {
  const { ref, action, by: eventActor, note, precondition } = transition;
  for (let attempt = 1; attempt <= MAX_TRANSITION_ATTEMPTS; attempt++) {
    const current = attempt === 1 && read ? read : await findRequest(db, ref);
    checkPrecondition(precondition, () => presentRequest(current));
    if (current.work.discardedAt) throw workDiscarded();
    const decision = decide(action, current);
    if (decision.kind === 'repeat' && !transition.repeatIsConflict) return presentRequest(current);
    if (decision.kind !== 'apply') {
      throw new ProblemError(
        'invalid_transition',
        `A ${current.status} request cannot be ${requestActions[action].pastTense}.`,
        {
          currentStatus: current.status,
          allowedActions: allowedActions(current.status),
        },
      );
    }
    const now = new Date();
    const throughDevMailbox = eventActor.type === 'recipient' && eventActor.throughDevMailbox;
    // The row as the update below leaves it: every column it does not set is as just read, since it only applies
    // while status and updatedAt are.
    const presented = presentRequest({
      ...current,
      status: decision.to,
      updatedAt: now,
      ...changesOf(action, note, now),
      ...(throughDevMailbox && { confirmedThroughDevMailbox: true }),
    });
    const event = outboxRow(requestActions[action].event, ref.tenantId, { request: presented }, now, {
      orderingKey: ref.requestId,
    });
    // One statement, so one round trip and atomic: the transition, its RequestEvent and its webhook outbox row are
    // written together, or (when the request changed or its work was discarded since the read) not at all. By keys
    // only: prepared, like the read before it (see plain-statement.ts).
    const applied = await preparedQuery<Pick<WebhookEvent, 'id'>>(
      db,
      `WITH changed AS (
         UPDATE requests r SET status = :to::request_status, updated_at = :now::timestamptz, ${changedColumns(action)},
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
      {
        requestId: ref.requestId,
        workId: ref.workId,
        to: decision.to,
        now: now.toISOString(),
        note: note ?? null,
        from: current.status,
        readUpdatedAt: current.updatedAt.toISOString(),
        eventId: newId(),
        action,
        actorId: eventActor.type === 'user' ? eventActor.userId : null,
        actorType: eventActor.type,
        throughDevMailbox,
        ...outboxParams(event),
      },
    );
    if (applied.length > 0) {
      db.outbox.webhooks.signal();
      return presented;
    }
    // Someone else changed the request (or discarded the work) in between: look again.
  }
  throw new Error(`request ${ref.requestId}: ${action} kept losing races`);
}

/**
 * Emails a pending request's recipient again, with a new link: the request's link generation goes up, which
 * revokes every earlier link at once; emails still queued for it are dropped, and one new email is queued, all in
 * one statement, which also takes the email's place under the daily caps (over one it aborts: 429, nothing
 * changed). At most one resend per `resendCooldownMs` (429 `resend_too_soon`) and `resendsPerRequest` in all
 * (409 `resend_limit_reached`), checked in that statement's WHERE, so concurrent resends cannot pass them. To an
 * address that stopped the tenant's emails nothing is sent and nothing else changes: the request says so. Not a
 * transition: the status, `updatedAt` and the ETag stay as they are.
 */
export async function resendRequest(
  db: Db,
  actor: Actor,
  ref: RequestRef,
  limits: MailCaps & Pick<Limits, 'resendCooldownMs' | 'resendsPerRequest'> = DEFAULT_LIMITS,
): Promise<Schemas['Request']> {
  const current = await findRequestAs(db, actor, 'actOnRequest', ref);
  const now = new Date();
  checkResendable(current, limits, now);
  let resent: Array<{ stopped: boolean; queued: number }>;
  try {
    resent = await preparedQuery<{ stopped: boolean; queued: number }>(
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
      {
        requestId: ref.requestId,
        workId: ref.workId,
        mailId: newId(),
        now: now.toISOString(),
        tenantId: ref.tenantId,
        resendsPerRequest: limits.resendsPerRequest,
        cooldown: `${limits.resendCooldownMs / 1000} seconds`,
        // The resender causes this email: it counts against their budget, not the request's creator's.
        ...allowanceParams(ref.tenantId, actor.userId, current.recipientEmail, limits, now),
      },
    );
  } catch (error) {
    throw mailCapRefusal(error, limits, now) ?? error;
  }
  // Changed in between (answered, cancelled, discarded, resent): answer from what it is now.
  if (resent.length === 0) return resendRequest(db, actor, ref, limits);
  if (resent[0]!.stopped) return presentRequest({ ...current, emailsStopped: true });
  db.outbox.mail.signal();
  return presentRequest({
    ...current,
    emailStatus: 'queued',
    emailFailure: null,
    emailsStopped: false,
    resendCount: current.resendCount + 1,
    lastResentAt: now,
  });
}

/** Why a request cannot be resent now, if it cannot: its state, its work, or the resend limits. */
function checkResendable(
  current: FoundRequest,
  limits: Pick<Limits, 'resendCooldownMs' | 'resendsPerRequest'>,
  now: Date,
): void {
  if (current.work.discardedAt) throw workDiscarded();
  if (current.status !== 'pending') {
    throw new ProblemError('invalid_transition', `A ${current.status} request cannot be resent.`, {
      currentStatus: current.status,
      allowedActions: allowedActions(current.status),
    });
  }
  if (current.resendCount >= limits.resendsPerRequest) {
    throw new ProblemError(
      'resend_limit_reached',
      `This request was resent ${limits.resendsPerRequest} times, the most allowed.`,
    );
  }
  const waitMs = (current.lastResentAt?.getTime() ?? -Infinity) + limits.resendCooldownMs - now.getTime();
  if (waitMs > 0) {
    throw new ProblemError(
      'resend_too_soon',
      `This request was resent less than ${describeDuration(limits.resendCooldownMs)} ago; retry after Retry-After.`,
      {},
      Math.ceil(waitMs / 1000),
    );
  }
}

/** `10 minutes`, `90 seconds`, `1 hour`: a cooldown in words. */
function describeDuration(ms: number): string {
  const [amount, unit] =
    ms % 3_600_000 === 0
      ? [ms / 3_600_000, 'hour']
      : ms % 60_000 === 0
        ? [ms / 60_000, 'minute']
        : [ms / 1000, 'second'];
  return `${amount} ${unit}${amount === 1 ? '' : 's'}`;
}
