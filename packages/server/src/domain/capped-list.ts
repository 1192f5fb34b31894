import type { CappedListWindow, CappedPage } from '@works-api/prisma';
import { isId } from '@works-api/prisma';
import { type Actor, type Permission, requirePermission } from './access';
import { notFound } from './errors';
import { type Connection, COUNT_CAP, pageOf, type PageRequest, toConnection } from './paging';

/**
 * A capped list of a tenant (a search, the tenant-wide request list, the events feed), read in ONE statement with
 * the caller's membership and the capped count (the database package's `readCappedPage`, statements/capped-lists.ts):
 * the same answers as `authorize` then `readPage` with `capped`. A non-member gets 404 and a role too low 403, as
 * from `authorize`; as `readPage` does, a first page that is not full is its own count. A list whose count the
 * database keeps (`readCountedList`) is read through the same shape, with its exact count.
 */
export interface CappedList<Row extends { id: string }, Node> {
  tenantId: string;
  permission: Permission;
  /** The list's statement (a typed function of the database package) for one page. */
  read: (window: CappedListWindow) => Promise<CappedPage<Row>>;
  present: (row: Row) => Node;
  /** The list's parent in the tenant, when it has one: what a 404 names when the statement did not find it. */
  parent?: 'work';
}

export async function readCappedList<Row extends { id: string }, Node>(
  actor: Actor,
  request: PageRequest,
  list: CappedList<Row, Node>,
): Promise<Connection<Node>> {
  const { connection, count } = await readMemberList(actor, request, list);
  if (count === null) return { ...connection, totalCountCapped: false };
  return count > COUNT_CAP
    ? { ...connection, totalCount: COUNT_CAP, totalCountCapped: true }
    : { ...connection, totalCountCapped: false };
}

/**
 * A list whose count the database keeps (a tenant's works), read the same way in one statement: the caller's
 * membership, the page and the exact count (the database package's `readCountedPage`).
 */
export async function readCountedList<Row extends { id: string }, Node>(
  actor: Actor,
  request: PageRequest,
  list: CappedList<Row, Node>,
): Promise<Connection<Node>> {
  return (await readMemberList(actor, request, list)).connection;
}

/** The page of a member's list, judged as `authorize` judges (404 to a non-member, 403 to a role too low). */
async function readMemberList<Row extends { id: string }, Node>(
  actor: Actor,
  request: PageRequest,
  list: CappedList<Row, Node>,
): Promise<{ connection: Connection<Node>; count: number | null }> {
  // An id we never issue names no tenant; it must not reach the uuid column either.
  if (!isId(list.tenantId)) throw notFound('tenant');
  const page = pageOf(request);
  const result = await list.read({
    tenantId: list.tenantId,
    userId: actor.userId,
    take: page.take,
    beforeId: page.beforeId,
    countTake: COUNT_CAP + 1,
  });
  const { role, rows, count } = result;
  if (!role) throw notFound('tenant');
  requirePermission({ tenantId: list.tenantId, role }, list.permission);
  if (result.parentFound === false) throw notFound(list.parent ?? 'tenant');
  return { connection: toConnection(rows, page, count ?? rows.length, list.present), count };
}
