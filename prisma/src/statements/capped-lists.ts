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
  /** The list's parent inside the tenant, when it has one (see CountedListSql.parent). */
  parent?: string;
  /** A search, apart from the list's own filter in `where`: its count is read as `readCappedPage` says. */
  search?: ListSearch;
}

/** A search's condition (`searchTermsSql` over the searched table, aliased `alias` in `countFrom`). */
export interface ListSearch {
  alias: string;
  where: string;
  params: StatementParams;
}

/** A search of a capped list, read by `readSearchPage`. */
export interface SearchListSql extends Omit<CappedListSql, 'countOrder' | 'search'> {
  search: ListSearch;
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

/**
 * A capped list's page, its count ordered by `countOrder`. With a search, the count first reads the
 * SEARCH_WALK_ROWS newest rows: a word that fills the cap there is capped; one with at least SEARCH_DENSE_MATCHES
 * matches there is counted by that walk newest first (it reaches the cap within about 20,000 rows); a sparser one is
 * counted through the prefix index in no order (its bitmap stops at the cap), where the walk newest first read 91,000
 * rows for `12` among the large data set's requests (104 ms; 13 ms through the index).
 */
export function readCappedPage<Row extends { id: string }>(
  db: Db,
  window: CappedListWindow,
  list: CappedListSql,
): Promise<CappedPage<Row>> {
  const { search } = list;
  const from = list.countFrom ?? list.from;
  const where = search ? `${list.where} AND ${search.where}` : list.where;
  const counted = `(SELECT count(*)::int FROM (SELECT 1 FROM ${from}
                     WHERE ${where} ORDER BY ${list.countOrder} LIMIT :countTake) AS counted)`;
  const page = plainPage({ ...list, where }, window);
  if (!search) {
    return readMemberPage<Row>(db, window, list, page, countWhenNeeded(window, counted), {
      params: { countTake: window.countTake },
      parent: list.parent,
    });
  }
  const recent = '(SELECT n FROM recent_matches)';
  const count = `CASE WHEN ${recent} = :countTake THEN :countTake::int
       WHEN ${recent} >= ${SEARCH_DENSE_MATCHES} THEN ${counted}
       ELSE (SELECT count(*)::int FROM (SELECT 1 FROM ${from} WHERE ${where} LIMIT :countTake) AS counted) END`;
  return readMemberPage<Row>(
    db,
    window,
    list,
    `recent_matches AS (
       SELECT count(*) AS n FROM (SELECT 1 FROM ${newestRows(list, search.alias, SEARCH_WALK_ROWS)}
                                   WHERE ${search.where} LIMIT :countTake) AS walk),
     ${page}`,
    countWhenNeeded(window, count),
    { params: { ...search.params, countTake: window.countTake }, parent: list.parent },
  );
}

/** Matches among a search's SEARCH_WALK_ROWS newest rows from which a count walks on newest first. */
const SEARCH_DENSE_MATCHES = 100;

/**
 * The newest rows of a list (its filter, not its search), with what a search reads, under the search's alias. The
 * limit is written into the text, not sent: a generic plan with an unknown LIMIT expects many rows.
 */
const newestRows = (
  list: Pick<CappedListSql, 'key' | 'from' | 'countFrom' | 'where'>,
  alias: string,
  limit: number,
  extra = '',
) =>
  `(SELECT ${list.key} AS id, ${alias}.search_prefixes, ${alias}.search FROM ${list.countFrom ?? list.from}
       WHERE ${list.where}${extra} ORDER BY ${list.key} DESC LIMIT ${limit}) AS ${alias}`;

/**
 * How many of the newest rows of a list a search reads one by one before it asks the prefix index instead, in two
 * steps: a glance at the newest SEARCH_GLANCE_ROWS, where a word with no match goes to the index at once (a rare
 * word, or one whose matches are old), then a walk of up to SEARCH_WALK_ROWS for a word the glance found but not a
 * page of. A few milliseconds of rows on PostgreSQL at most.
 */
export const SEARCH_GLANCE_ROWS = 300;
export const SEARCH_WALK_ROWS = 2000;

/**
 * A page of a search of a capped list, with the caller's role and the capped count, in ONE statement. Neither of
 * PostgreSQL's two plans for a search is bounded on its own: a walk of the list newest first reads until it has a
 * page, which is long for a word whose matches are old (`12` among works numbered to 200,000: 80,000 rows, 30 ms);
 * the prefix index reads every match to sort them, which is long for a word with many (22,000 requests, 22 ms).
 * PostgreSQL estimates a word's frequency well but cannot see whether its matches are recent, so it often picks the
 * long one. This statement decides from the rows instead:
 *
 * - The page glances at the SEARCH_GLANCE_ROWS newest rows, and walks on to SEARCH_WALK_ROWS when the glance found a
 *   match (lazily: a common word stops after its page). If that gave a full page, it is the page; otherwise the word
 *   is rare among recent rows, and the page comes from the prefix index, sorted (`ORDER BY id::text COLLATE "C"`, the
 *   uuid's own order, which no index gives, so that PostgreSQL cannot choose the walk again).
 * - The count (when the page is not its own) walks at most SEARCH_WALK_ROWS newest rows too when the glance was full
 *   (a common word): one that fills the cap there is capped. Otherwise it counts to the cap in whatever order
 *   PostgreSQL finds cheapest (no ORDER BY: the prefix index's bitmap stops at the cap).
 *
 * The search of works reads it (works.ts). The request lists keep PostgreSQL's page and take only the count that
 * looks first (`readCappedPage` with a search): this statement was slower there for every word but the middling
 * ones, planned for each search (its planning costs more than the plain statement's) and prepared alike
 * (docs/benchmarks.md, "Search at scale"). Its count differs from that one: it has no walk on for a dense word.
 */
export function readSearchPage<Row extends { id: string }>(
  db: Db,
  window: CappedListWindow,
  list: SearchListSql,
): Promise<CappedPage<Row>> {
  const { key, where } = list;
  const { alias } = list.search;
  const from = list.countFrom ?? list.from;
  const search = list.search.where;
  const after = window.beforeId !== undefined ? ` AND ${key} < :after::uuid` : '';
  const member = 'EXISTS (SELECT 1 FROM member) AND (SELECT found FROM parent)';
  const newest = (limit: number, extra = '') => newestRows(list, alias, limit, extra);
  const walked = `(SELECT count(*) FROM walked)`;
  const glanced = `(SELECT count(*) FROM glance)`;
  // `searched` sorts the matches' ids alone (their page's columns and owners are read for the page only), and is
  // MATERIALIZED so that it runs only when read, behind the one-time filter below.
  const page = `glance AS (
       SELECT ${alias}.id FROM ${newest(SEARCH_GLANCE_ROWS, ` AND ${member}${after}`)} WHERE ${search} LIMIT :take),
     walked AS (
       SELECT ${alias}.id FROM ${newest(SEARCH_WALK_ROWS, ` AND ${member}${after}`)}
       WHERE ${glanced} > 0 AND ${search} LIMIT :take),
     searched AS MATERIALIZED (
       SELECT ${key} AS id FROM ${from}
       WHERE ${member} AND ${where} AND ${search}${after}
       ORDER BY ${key}::text COLLATE "C" DESC LIMIT :take),
     page AS (
       SELECT ${list.columns} FROM ${list.from}
       WHERE ${key} IN (SELECT id FROM walked WHERE ${walked} = :take
                        UNION ALL SELECT id FROM searched WHERE ${walked} < :take)
       ORDER BY ${key} DESC)`;
  const counted = `CASE
       WHEN ${glanced} = :take
        AND (SELECT count(*) FROM (SELECT 1 FROM ${newest(SEARCH_WALK_ROWS)} WHERE ${search} LIMIT :countTake) AS walk)
            = :countTake THEN :countTake::int
       ELSE (SELECT count(*)::int FROM (SELECT 1 FROM ${from} WHERE ${where} AND ${search} LIMIT :countTake) AS counted)
     END`;
  return readMemberPage<Row>(db, window, list, page, countWhenNeeded(window, counted), {
    params: { ...list.search.params, countTake: window.countTake },
    parent: list.parent,
    // Prepared: the statement chooses between the walk and the index from the rows, not from a word's estimates, so
    // one plan serves every word; planning its subqueries anew cost more than running them.
    options: { prepared: true },
  });
}

/** The count only where the page is not its own: a later page, or a full first page. */
const countWhenNeeded = (window: CappedListWindow, count: string) =>
  `CASE WHEN ${window.beforeId !== undefined ? 'TRUE' : '(SELECT count(*) FROM page) = :take'} THEN ${count} END`;

/** A page of a list without a search: its filter's rows, newest first. */
const plainPage = (list: Pick<CappedListSql, 'columns' | 'from' | 'key' | 'where'>, window: CappedListWindow) =>
  `page AS (
       SELECT ${list.columns} FROM ${list.from}
       WHERE EXISTS (SELECT 1 FROM member) AND (SELECT found FROM parent)
         AND ${list.where}${window.beforeId !== undefined ? ` AND ${list.key} < :after::uuid` : ''}
       ORDER BY ${list.key} DESC LIMIT :take)`;

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
  return readMemberPage<Row>(db, window, list, plainPage(list, window), list.count, {
    options: { prepared: list.prepared },
    parent: list.parent,
  });
}

/**
 * The statement every kind of list shares: member, parent, the page (`page`: SQL of the CTEs that end with `page`),
 * and `count` (SQL, null: the page is its own count).
 */
async function readMemberPage<Row extends { id: string }>(
  db: Db,
  window: CappedListWindow,
  list: Pick<CappedListSql, 'params'>,
  page: string,
  count: string,
  extra: { params?: StatementParams; options?: SendOptions | undefined; parent?: string | undefined },
): Promise<CappedPage<Row>> {
  const after = window.beforeId !== undefined;
  const rows = await sendStatement<Partial<Row> & Framing>(
    db,
    `WITH member AS (
       SELECT role::text AS role FROM memberships WHERE tenant_id = :tenantId::uuid AND user_id = :userId::uuid),
     parent AS (SELECT ${extra.parent ?? 'TRUE'} AS found),
     ${page}
     SELECT member.role AS "__role", (SELECT found FROM parent) AS "__parent", ${count} AS "__count", page.*
     FROM (SELECT 1) AS one LEFT JOIN member ON TRUE LEFT JOIN page ON TRUE`,
    {
      ...list.params,
      ...extra.params,
      tenantId: window.tenantId,
      userId: window.userId,
      take: window.take,
      ...(after && { after: window.beforeId }),
    },
    extra.options,
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
