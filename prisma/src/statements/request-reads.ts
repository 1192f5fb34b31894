import type { Db } from '../handle';
import type { Prisma, Request } from '../generated/client';
import { type CappedListWindow, type CappedPage, readCappedPage, readCountedPage } from './capped-lists';
import { newestFirst, type PageWindow } from './pages';
import { type OwnerColumns, ownerColumns } from './parts';
import { type SearchTerms, searchTermsSql } from './search';
import { userRecord } from './users';

/** The reads of requests: a work's requests, the tenant-wide list, one request, a request's events. */

/** What a request is read with: its owner's user record. */
export const withOwner = { owner: userRecord } as const;

/** A request as read with its owner, without the search prefixes, which no read returns (the client's `omit`). */
export type RequestRow = Omit<Prisma.RequestGetPayload<{ include: typeof withOwner }>, 'searchPrefixes'>;

type RequestStatus = Request['status'];

/**
 * A page of a search of a work's requests, newest first, with the caller's role, whether the work is in the tenant,
 * and the capped count, in one statement (capped-lists.ts, `readCappedPage` with a search): PostgreSQL plans the page
 * for its words, between the work's index (work_id, id), or (work_id, status, id) with a status, and the prefix index
 * (tenant_id, search_prefixes), which is why the tenant's id is in the filter too.
 */
export function searchWorkRequestsPage(
  db: Db,
  window: CappedListWindow,
  filter: { workId: string; status?: RequestStatus | undefined; search: SearchTerms },
): Promise<CappedPage<TenantRequestRow>> {
  const byStatus = filter.status !== undefined;
  return readCappedPage<TenantRequestRow>(db, window, {
    columns: TENANT_REQUEST_COLUMNS,
    from: 'requests r JOIN users u ON u.id = r.owner_id',
    countFrom: 'requests r',
    key: 'r.id',
    where: `r.work_id = :workId::uuid AND r.tenant_id = :tenantId::uuid${byStatus ? ' AND r.status = :status::request_status' : ''}`,
    params: { workId: filter.workId, ...(byStatus && { status: filter.status }) },
    countOrder: 'r.id DESC',
    search: { alias: 'r', ...searchTermsSql(filter.search, 'r') },
    parent: WORK_IN_TENANT,
  });
}

/** SQL true when the work `:workId` is in the tenant `:tenantId` (discarded or not). */
const WORK_IN_TENANT = 'EXISTS (SELECT 1 FROM works WHERE id = :workId::uuid AND tenant_id = :tenantId::uuid)';

/** A work's requests of one status, or all: the sum that counts them in its counter rows. */
const WORK_REQUESTS_COUNTED = (status: RequestStatus | undefined) =>
  status === undefined ? 'pending + confirmed + validated + cancelled' : status;

/**
 * A page of a work's requests without a search, newest first, with the caller's role, whether the work is in the
 * tenant, and the count the database keeps: one statement (capped-lists.ts, `readCountedPage`) where the
 * membership, the work, the page and the count were four round trips. By (work_id, id), or (work_id, status, id)
 * with a status.
 */
export function workRequestsCountedPage(
  db: Db,
  window: CappedListWindow,
  filter: { workId: string; status?: RequestStatus | undefined },
): Promise<CappedPage<TenantRequestRow>> {
  return readCountedPage<TenantRequestRow>(db, window, {
    columns: TENANT_REQUEST_COLUMNS,
    from: 'requests r JOIN users u ON u.id = r.owner_id',
    key: 'r.id',
    where: `r.work_id = :workId::uuid${filter.status ? ' AND r.status = :status::request_status' : ''}`,
    params: { workId: filter.workId, ...(filter.status && { status: filter.status }) },
    count: `(SELECT COALESCE(SUM(${WORK_REQUESTS_COUNTED(filter.status)}), 0) FROM work_counts
             WHERE work_id = :workId::uuid)`,
    parent: WORK_IN_TENANT,
    // Planned for its work: see CountedListSql.prepared (statement-plans.test.ts checks a work with none).
    prepared: false,
  });
}

/** A request of a work of the tenant, with its owner and whether that work is discarded (null: none). */
export function findRequestOfWork(db: Db, ref: { tenantId: string; workId: string; requestId: string }) {
  return db.prisma.request.findFirst({
    where: { id: ref.requestId, workId: ref.workId, work: { tenantId: ref.tenantId } },
    include: { ...withOwner, work: { select: { discardedAt: true } } },
  });
}

/** A page of a request's events, newest first, each with its actor's record (none: the recipient). */
export function requestEventsPage(db: Db, requestId: string, page: PageWindow) {
  const window = newestFirst(page, 'id');
  return db.prisma.requestEvent.findMany({
    ...window,
    where: { requestId, ...window.where },
    include: { actor: userRecord },
  });
}

/** A request's events: the state machine bounds them (a handful), so this reads a handful of index entries. */
export function countRequestEvents(db: Db, requestId: string): Promise<number> {
  return db.prisma.requestEvent.count({ where: { requestId } });
}

/** The tenant-wide request list's filter (each absent: any). */
export interface TenantRequestsFilter {
  statuses?: readonly RequestStatus[] | undefined;
  /** The recipient's normalized email. */
  recipient?: string | undefined;
  /** A work's id; null for a work id that names no work (nothing matches). */
  workId?: string | null | undefined;
  dueBefore?: Date | undefined;
  dueAfter?: Date | undefined;
  search?: SearchTerms | undefined;
}

/** A request with its owner as the tenant-wide list reads it (r: the request, u: its owner). */
const TENANT_REQUEST_COLUMNS = `r.id, r.work_id AS "workId", r.status::text AS status, r.title, r.message,
  r.recipient_email AS "recipientEmail", r.recipient_first_name AS "recipientFirstName",
  r.recipient_last_name AS "recipientLastName", r.answer, r.validation::text AS validation,
  r.cancel_reason AS "cancelReason", r.due_at AS "dueAt", r.created_at AS "createdAt", r.updated_at AS "updatedAt",
  r.confirmed_at AS "confirmedAt", r.validated_at AS "validatedAt", r.cancelled_at AS "cancelledAt",
  r.email_status::text AS "emailStatus", r.email_sent_at AS "emailSentAt", r.email_failure AS "emailFailure",
  r.emails_stopped AS "emailsStopped", r.confirmed_through_dev_mailbox AS "confirmedThroughDevMailbox",
  ${ownerColumns('u')}`;

/** A request's own columns as `TENANT_REQUEST_COLUMNS` reads them: what the contract's Request shows of it. */
export type RequestShownColumns = Pick<
  Request,
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

/** A row of the tenant-wide list: the request's shown columns and its owner's. */
export type TenantRequestRow = RequestShownColumns & OwnerColumns;

/**
 * A page of every request in the tenant's kept works, newest first, with the caller's role and the capped count
 * (capped-lists.ts). Read by the tenant's own indexes on requests ((tenant_id, id), (tenant_id, status, id),
 * (tenant_id, recipient_email, id), the prefix index (tenant_id, search_prefixes), and (tenant_id, id) of the
 * requests with a due date), each row checked against its work (kept) by primary key.
 */
export function tenantRequestsPage(
  db: Db,
  window: CappedListWindow,
  filter: TenantRequestsFilter,
): Promise<CappedPage<TenantRequestRow>> {
  const { where, params } = tenantRequestsWhere(filter);
  return readCappedPage<TenantRequestRow>(db, window, {
    columns: TENANT_REQUEST_COLUMNS,
    from: 'requests r JOIN works w ON w.id = r.work_id JOIN users u ON u.id = r.owner_id',
    countFrom: 'requests r JOIN works w ON w.id = r.work_id',
    key: 'r.id',
    where,
    params,
    countOrder: tenantRequestsCountOrder(filter),
    ...(filter.search && { search: { alias: 'r', ...searchTermsSql(filter.search, 'r') } }),
  });
}

/**
 * The count's order: the columns of the index the filter reads. One status: its index gives the order. Several: a
 * walk newest first that filters them (an IN list on the status index would come in status order, and read the
 * statuses not asked for before the first it finds).
 */
function tenantRequestsCountOrder(filter: TenantRequestsFilter): string {
  const byStatus = filter.statuses?.length === 1;
  // A search counts newest first, like its page: PostgreSQL chooses the prefix index or a walk for both.
  if (filter.search !== undefined) return 'r.id DESC';
  if (filter.workId !== undefined)
    return byStatus ? 'r.work_id DESC, r.status DESC, r.id DESC' : 'r.work_id DESC, r.id DESC';
  if (filter.recipient !== undefined) return 'r.tenant_id DESC, r.recipient_email DESC, r.id DESC';
  return byStatus ? 'r.tenant_id DESC, r.status DESC, r.id DESC' : 'r.tenant_id DESC, r.id DESC';
}

/** The tenant-wide list's filter as SQL over `r` (the request) and `w` (its work), its search aside. */
function tenantRequestsWhere(filter: TenantRequestsFilter): { where: string; params: Record<string, unknown> } {
  const where = ['r.tenant_id = :tenantId::uuid', 'w.discarded_at IS NULL'];
  const params: Record<string, unknown> = {};
  const { statuses } = filter;
  if (statuses?.length === 1) {
    where.push('r.status = :status::request_status');
    params.status = statuses[0];
  } else if (statuses) {
    where.push('r.status = ANY(:statuses::request_status[])');
    params.statuses = statuses;
  }
  if (filter.recipient !== undefined) {
    where.push('r.recipient_email = :recipient');
    params.recipient = filter.recipient;
  }
  if (filter.workId === null) where.push('FALSE');
  else if (filter.workId !== undefined) {
    where.push('r.work_id = :workId::uuid');
    params.workId = filter.workId;
  }
  if (filter.dueBefore) {
    where.push('r.due_at < :dueBefore::timestamptz');
    params.dueBefore = filter.dueBefore.toISOString();
  }
  if (filter.dueAfter) {
    where.push('r.due_at > :dueAfter::timestamptz');
    params.dueAfter = filter.dueAfter.toISOString();
  }
  return { where: where.join(' AND '), params };
}
