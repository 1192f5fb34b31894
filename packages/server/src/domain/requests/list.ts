import { parseDateTime } from '../dates';
import type { Db } from '@works-api/prisma';
import { countRequestsOf, isId } from '@works-api/prisma';
import { type Actor, authorize } from '../access';
import { newestFirst, type Page, type PageRequest, readPage } from '../paging';
import { normalizeEmail, type OwnerColumns, ownerColumns, ownerRecord } from '../users/present';
import { findWork } from '../works/works';
import { searchSql, searchWhere } from '../search/fold';
import { readCappedList } from '../capped-list';
import type { Schemas } from '../schemas';
import type { RequestStatus } from './state-machine';
import { presentRequest, type PresentedRequestRow, withOwner } from './present';

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
 * it is kept. One statement with the caller's membership and the count (see `readCappedList`).
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
  return readCappedList(db, actor, query, {
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
