import { parseDateTime } from '../dates';
import type { Db, TenantRequestRow, TenantRequestsFilter } from '@works-api/prisma';
import { isId, tenantRequestsPage, searchWorkRequestsPage, workRequestsCountedPage } from '@works-api/prisma';
import { type Actor, authorize } from '../access';
import type { PageRequest } from '../paging';
import { normalizeEmail, ownerRecord } from '../users/present';
import { searchTerms } from '../search/fold';
import { readCappedList, readCountedList } from '../capped-list';
import { notFound } from '../errors';
import type { Schemas } from '../schemas';
import type { RequestStatus } from './state-machine';
import { presentRequest } from './present';

export async function listRequests(
  db: Db,
  actor: Actor,
  tenantId: string,
  workId: string,
  request: PageRequest & { status?: RequestStatus; q?: string },
) {
  const { status } = request;
  // An id we never issue names no work (after the same checks of the tenant and the role).
  if (!isId(workId)) {
    await authorize(db, actor, tenantId, 'readTenant');
    throw notFound('work');
  }
  // One statement: the caller's membership, the work, the page and the count (kept by the database; capped for a
  // search, of which no count is kept).
  if (request.q === undefined) {
    return readCountedList(actor, request, {
      tenantId,
      permission: 'readTenant',
      read: (window) => workRequestsCountedPage(db, window, { workId, status }),
      present: presentRequestColumns,
      parent: 'work',
    });
  }
  const search = searchTerms(request.q);
  return readCappedList(actor, request, {
    tenantId,
    permission: 'readTenant',
    read: (window) => searchWorkRequestsPage(db, window, { workId, status, search }),
    present: presentRequestColumns,
    parent: 'work',
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
  return readCappedList(actor, query, {
    tenantId,
    permission: 'readTenant',
    read: (window) => tenantRequestsPage(db, window, filter),
    present: presentRequestColumns,
  });
}

/** A request read as `TenantRequestRow` (its owner's columns beside its own). */
const presentRequestColumns = (row: TenantRequestRow): Schemas['Request'] =>
  presentRequest({ ...row, owner: ownerRecord(row) });

/** The tenant-wide request list's filter, from the query; bad input is a 400 naming the parameter. */
function tenantRequestsFilter(query: TenantRequestsQuery): TenantRequestsFilter {
  return {
    statuses: query.status === undefined ? undefined : ([...new Set(query.status.split(','))] as RequestStatus[]),
    recipient: query.recipient === undefined ? undefined : normalizeEmail(query.recipient),
    // An id we never issue names no work (and must not reach the uuid column).
    workId: query.workId === undefined ? undefined : isId(query.workId) ? query.workId : null,
    // Checked by the validator (format date-time is `isRealDateTime`, which reads what parseDateTime reads).
    dueBefore: query.dueBefore === undefined ? undefined : parseDateTime(query.dueBefore),
    dueAfter: query.dueAfter === undefined ? undefined : parseDateTime(query.dueAfter),
    search: query.q === undefined ? undefined : searchTerms(query.q),
  };
}
