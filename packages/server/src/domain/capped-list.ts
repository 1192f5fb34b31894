import type { Db } from '@works-api/prisma';
import { isId, sendStatement, type StatementParams } from '@works-api/prisma';
import { type Actor, type Permission, requirePermission, type Role } from './access';
import { notFound } from './errors';
import { type Connection, COUNT_CAP, pageOf, type PageRequest, toConnection } from './paging';

/**
 * A capped list of a tenant (a search, the tenant-wide request list, the events feed) read in ONE statement: the
 * caller's membership, the page, and the capped count when the page needs one. The same work as `authorize` then
 * `readPage` with `capped`, three round trips (and Prisma's building and mapping of two of them) fewer on a full
 * page: on the large data set these lists were bound by the server's CPU per request, not by PostgreSQL.
 *
 * - The page and the count only read when the caller is a member (`EXISTS (SELECT 1 FROM member)`); a non-member
 *   gets 404 and a role too low 403, as from `authorize`.
 * - The count is a scalar subquery under a CASE, evaluated only when its branch is taken (PostgreSQL runs an
 *   uncorrelated subquery on first use): as `readPage` does, a first page that is not full is its own count.
 * - `countOrder` is the ORDER BY of the count: every column of the index the list's filter reads (see
 *   `indexOrder`), so that the count reads that index and never walks the primary key.
 */
export interface CappedList<Row extends { id: string }, Node> {
  tenantId: string;
  permission: Permission;
  /** The page's columns (`id` among them), over `from`. */
  columns: string;
  /** FROM and its joins; `key` names the row's id in it. */
  from: string;
  /** What the count reads (FROM and joins), when narrower than `from` (no joins only the page needs). */
  countFrom?: string;
  key: string;
  /** The list's filter, SQL over named parameters (`:name`); the tenant's as `:tenantId`. */
  where: string;
  params: StatementParams;
  countOrder: string;
  present: (row: Row) => Node;
}

interface Framing {
  __role: Role | null;
  __count: number | null;
}

export async function readCappedList<Row extends { id: string }, Node>(
  db: Db,
  actor: Actor,
  request: PageRequest,
  list: CappedList<Row, Node>,
): Promise<Connection<Node>> {
  // An id we never issue names no tenant; it must not reach the uuid column either.
  if (!isId(list.tenantId)) throw notFound('tenant');
  const page = pageOf(request);
  const after = page.beforeId !== undefined;
  const counted = `(SELECT count(*)::int FROM (SELECT 1 FROM ${list.countFrom ?? list.from}
                     WHERE ${list.where} ORDER BY ${list.countOrder} LIMIT :countTake) AS counted)`;
  const rows = await sendStatement<Partial<Row> & Framing>(
    db,
    `WITH member AS (
       SELECT role::text AS role FROM memberships WHERE tenant_id = :tenantId::uuid AND user_id = :userId::uuid),
     page AS (
       SELECT ${list.columns} FROM ${list.from}
       WHERE EXISTS (SELECT 1 FROM member) AND ${list.where}${after ? ` AND ${list.key} < :after::uuid` : ''}
       ORDER BY ${list.key} DESC LIMIT :take)
     SELECT member.role AS "__role",
            CASE WHEN ${after ? 'TRUE' : '(SELECT count(*) FROM page) = :take'} THEN ${counted} END AS "__count", page.*
     FROM (SELECT 1) AS one LEFT JOIN member ON TRUE LEFT JOIN page ON TRUE`,
    {
      ...list.params,
      tenantId: list.tenantId,
      userId: actor.userId,
      take: page.take,
      countTake: COUNT_CAP + 1,
      ...(after && { after: page.beforeId }),
    },
  );
  const role = rows[0]?.__role;
  if (!role) throw notFound('tenant');
  requirePermission({ tenantId: list.tenantId, role }, list.permission);
  const items = (rows[0]!.id === null ? [] : rows) as unknown as Row[];
  const count = rows[0]!.__count;
  const connection = toConnection(items, page, count ?? items.length, list.present);
  if (count === null) return { ...connection, totalCountCapped: false };
  return count > COUNT_CAP
    ? { ...connection, totalCount: COUNT_CAP, totalCountCapped: true }
    : { ...connection, totalCountCapped: false };
}
