/**
 * Keyset paging over time-ordered ids (UUIDv7), newest first. Inside the service a page's position is the id of
 * its last item: `edges[].cursor` and `pageInfo.endCursor` hold ids as the domain builds a Connection, and `after`
 * is an id when it reaches it. The HTTP layer turns them into the cursors partners see, and back, binding each to
 * its list and signing it (domain/cursors.ts), so no id-shaped string from outside is ever taken as a position.
 * Rows inserted while a client pages are newer than every cursor, so they land before the first page: nothing is
 * skipped or repeated.
 */
// The contract's default `limit` is the database package's, as the embedded first pages read it too.
import { DEFAULT_PAGE_SIZE } from '@works-api/prisma';

export interface PageRequest {
  limit?: number;
  /** The id after which the page starts (a cursor the HTTP layer has read). */
  after?: string;
}

/** The rows one page reads: at most `take`, all older than `beforeId`. */
export interface Page {
  take: number;
  /** Only ids below this one (older items). */
  beforeId?: string;
}

export interface Connection<T> {
  totalCount: number;
  /** Set on lists whose count is capped (a search, the tenant-wide lists): true when there are more than it says. */
  totalCountCapped?: boolean;
  edges: Array<{ cursor: string; node: T }>;
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
}

/** Where a Connection that is not its operation's own list pages on (see `pagesOn`). */
export const LIST_OF_CONNECTION = Symbol('the list operation a connection is the first page of');

/** A list operation of the contract, under its parent ids, with the query it was asked with (defaults aside). */
export interface PagedList {
  operationId: string;
  path: Record<string, string>;
  query?: Record<string, string>;
}

/**
 * Marks `connection` as the first page of another list (a tenant's `works` is the first page of `listWorks` for
 * that tenant), so that its cursors are issued for that list and `after` takes them there. A list operation's own
 * Connection needs no mark; any other Connection without one is a bug the HTTP layer refuses to send.
 */
export function pagesOn<T extends Connection<unknown>>(connection: T, list: PagedList): T {
  Object.defineProperty(connection, LIST_OF_CONNECTION, { value: list, enumerable: false });
  return connection;
}

/** The list a Connection is marked to page on (`pagesOn`), if any. */
export const listOfConnection = (value: object): PagedList | undefined =>
  (value as { [LIST_OF_CONNECTION]?: PagedList })[LIST_OF_CONNECTION];

/** The page to read: one row more than asked, to learn whether another page follows. */
export function pageOf(request: PageRequest): Page {
  const take = (request.limit ?? DEFAULT_PAGE_SIZE) + 1;
  return request.after === undefined ? { take } : { take, beforeId: request.after };
}

/**
 * The one way a list is read. Two statements, sent together:
 * - `rows`: the page's window, newest first, through an index whose order is the list's (`newestFirst` gives
 *   Prisma's arguments), so a page touches `limit + 1` rows wherever it starts;
 * - `totalCount`: never a `count(*)` of the list, which costs O(rows) per page. Either a count the
 *   database keeps (prisma/src/counts.ts: updated in the statement that changes the rows), or, for a list a rule bounds
 *   (a request's events: a handful), the count of that bounded list.
 */
export async function readPage<Row extends { id: string }, Node>(
  request: PageRequest,
  list: {
    rows: (page: Page) => Promise<readonly Row[]>;
    /** A count the database keeps, or of a list a rule bounds; or else `capped`. */
    totalCount?: () => Promise<number>;
    /** For a list without such a count: counts at most `take` of its rows (see `cappedCount`). */
    capped?: (take: number) => Promise<number>;
    /** (Row is read from `rows`: `present` may take any wider type.) */
    present: (row: NoInfer<Row>) => Node;
  },
): Promise<Connection<Node>> {
  const page = pageOf(request);
  if (list.capped) {
    // A capped count repeats the page's search: a first page that is not full already holds every match.
    const rows = await list.rows(page);
    const counted =
      request.after === undefined && rows.length < page.take
        ? { totalCount: rows.length, capped: false }
        : await cappedCount(list.capped);
    return { ...toConnection(rows, page, counted.totalCount, list.present), totalCountCapped: counted.capped };
  }
  const [rows, totalCount] = await Promise.all([list.rows(page), list.totalCount!()]);
  return toConnection(rows, page, totalCount, list.present);
}

/**
 * A search, or a list across a whole tenant, has no count the database keeps, and counting its matches costs
 * O(matches). Such a list counts at most this many; past it, `totalCount` is the cap and `totalCountCapped` true.
 */
export const COUNT_CAP = 1000;

export interface CappedCount {
  totalCount: number;
  capped: boolean;
}

/**
 * Counts with `count(take)` (a count of at most `take` rows): exact up to COUNT_CAP, then capped. `readPage` counts
 * only pages that are full or not the first. Prisma orders a
 * count with `take`; the caller orders it by every column of the index the list's filter reads (see `indexOrder`),
 * which only that index provides, so the count reads that index and never walks the primary key.
 */
export async function cappedCount(count: (take: number) => Promise<number>): Promise<CappedCount> {
  const counted = await count(COUNT_CAP + 1);
  return counted > COUNT_CAP ? { totalCount: COUNT_CAP, capped: true } : { totalCount: counted, capped: false };
}

/** Builds the Connection from rows read with `pageOf` (newest first, possibly one extra). */
export function toConnection<Row extends { id: string }, Node>(
  rows: readonly Row[],
  page: Page,
  totalCount: number,
  present: (row: Row) => Node,
): Connection<Node> {
  const hasNextPage = rows.length === page.take;
  const kept = hasNextPage ? rows.slice(0, page.take - 1) : rows;
  const edges = kept.map((row) => ({ cursor: row.id, node: present(row) }));
  return { totalCount, edges, pageInfo: { hasNextPage, endCursor: edges.at(-1)?.cursor ?? null } };
}

/** Prisma's `orderBy` that is exactly the order of an index on `columns`, each descending. */
export const indexOrder = <Column extends string>(...columns: Column[]) =>
  columns.map((column) => ({ [column]: 'desc' }) as Record<Column, 'desc'>);
