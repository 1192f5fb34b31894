import type { Db } from '../handle';
import { type StatementParams } from './named-parameters';
import { type SendOptions, sendStatement } from './send';

/**
 * A capped list of a tenant (a search, the tenant-wide request list, the events feed) read in ONE statement: the
 * caller's membership, the page, and the capped count when the page needs one. Three round trips (and Prisma's
 * building and mapping of two of them) fewer on a full page than a membership check, a page and a count apart: on
 * the large data set these lists were bound by the server's CPU per request, not by PostgreSQL.
 *
 * - The page and the count only read when the caller is a member (`EXISTS (SELECT 1 FROM member)`); the caller's
 *   role comes back (null: not a member) for the server's rules to judge.
 * - The count is a scalar subquery under a CASE, evaluated only when its branch is taken (PostgreSQL runs an
 *   uncorrelated subquery on first use): a first page that is not full is its own count.
 * - `countOrder` is the ORDER BY of the count: every column of the index the list's filter reads, so that the count
 *   reads that index and never walks the primary key.
 *
 * Each list (works.ts, requests-list.ts, events.ts) gives its columns, joins and filter; the server gives a typed
 * filter, never SQL.
 */
export interface CappedListSql {
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
}

/** Which page of a capped list, for whom, and how far its count goes. */
export interface CappedListWindow {
  tenantId: string;
  userId: string;
  take: number;
  /** Only ids below this one (older items). */
  beforeId?: string | undefined;
  /** The count stops at this many rows. */
  countTake: number;
}

/** What a capped list's statement returns: the caller's role (null: not a member), the page, and its count. */
export interface CappedPage<Row> {
  role: 'owner' | 'admin' | 'member' | null;
  rows: Row[];
  /** Null when the page is its own count (a first page that is not full). */
  count: number | null;
  /** False when the list's parent (a work) is not in the tenant: nothing was read. */
  parentFound?: false;
}

interface Framing {
  __role: CappedPage<unknown>['role'];
  __parent: boolean;
  __count: number | string | null;
}

export function readCappedPage<Row extends { id: string }>(
  db: Db,
  window: CappedListWindow,
  list: CappedListSql,
): Promise<CappedPage<Row>> {
  const counted = `(SELECT count(*)::int FROM (SELECT 1 FROM ${list.countFrom ?? list.from}
                     WHERE ${list.where} ORDER BY ${list.countOrder} LIMIT :countTake) AS counted)`;
  // The count only where the page is not its own: a later page, or a full first page.
  const when = window.beforeId !== undefined ? 'TRUE' : '(SELECT count(*) FROM page) = :take';
  return readMemberPage<Row>(db, window, list, `CASE WHEN ${when} THEN ${counted} END`, {
    countTake: window.countTake,
  });
}

/** A list whose count the database keeps (counts.ts): its page and that count, with the caller's membership. */
export interface CountedListSql extends Omit<CappedListSql, 'countFrom' | 'countOrder'> {
  /** A scalar SQL expression of the list's count: a sum of its counter rows (16 at most, by primary key). */
  count: string;
  /**
   * The list's parent inside the tenant, when it has one (a work's requests): SQL true when it exists. Nothing is
   * read without it, and the page says whether it was found (`parentFound`).
   */
  parent?: string;
  /**
   * Prepared (one generic plan per connection) only when that plan is right for every parent: a tenant's works
   * lead with tenant_id in every index they can use. A work's requests are not: the generic plan of
   * `work_id = $1 AND status = $2` walked the whole primary key for a work with no requests (328 ms on the 1M-row
   * data set), where a plan for the value reads (work_id, status, id).
   */
  prepared: boolean;
}

/**
 * A list with a kept count (a tenant's works, a work's requests) in ONE statement: the caller's membership, the
 * page and the count, where the membership check, the page and the count apart were three round trips or more.
 */
export function readCountedPage<Row extends { id: string }>(
  db: Db,
  window: CappedListWindow,
  list: CountedListSql,
): Promise<CappedPage<Row>> {
  return readMemberPage<Row>(db, window, list, list.count, {}, { prepared: list.prepared }, list.parent);
}

/** The statement both kinds of list share: member, page, and `count` (SQL, null: the page is its own count). */
async function readMemberPage<Row extends { id: string }>(
  db: Db,
  window: CappedListWindow,
  list: Pick<CappedListSql, 'columns' | 'from' | 'key' | 'where' | 'params'>,
  count: string,
  countParams: StatementParams,
  options?: SendOptions,
  parent?: string,
): Promise<CappedPage<Row>> {
  const after = window.beforeId !== undefined;
  const rows = await sendStatement<Partial<Row> & Framing>(
    db,
    `WITH member AS (
       SELECT role::text AS role FROM memberships WHERE tenant_id = :tenantId::uuid AND user_id = :userId::uuid),
     parent AS (SELECT ${parent ?? 'TRUE'} AS found),
     page AS (
       SELECT ${list.columns} FROM ${list.from}
       WHERE EXISTS (SELECT 1 FROM member) AND (SELECT found FROM parent)
         AND ${list.where}${after ? ` AND ${list.key} < :after::uuid` : ''}
       ORDER BY ${list.key} DESC LIMIT :take)
     SELECT member.role AS "__role", (SELECT found FROM parent) AS "__parent", ${count} AS "__count", page.*
     FROM (SELECT 1) AS one LEFT JOIN member ON TRUE LEFT JOIN page ON TRUE`,
    {
      ...list.params,
      ...countParams,
      tenantId: window.tenantId,
      userId: window.userId,
      take: window.take,
      ...(after && { after: window.beforeId }),
    },
    options,
  );
  const role = rows[0]?.__role ?? null;
  if (!role) return { role: null, rows: [], count: null };
  const total = rows[0]!.__count;
  if (!rows[0]!.__parent) return { role, rows: [], count: null, parentFound: false };
  return {
    role,
    rows: (rows[0]!.id === null ? [] : rows) as unknown as Row[],
    // A sum is bigint, which the driver returns as text.
    count: total === null ? null : Number(total),
  };
}
