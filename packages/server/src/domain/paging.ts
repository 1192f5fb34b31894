/**
 * Keyset paging over time-ordered ids (UUIDv7), newest first. Inside the service a page's position is the id of
 * its last item: `edges[].cursor` and `pageInfo.endCursor` hold ids as the domain builds a Connection, and `after`
 * is an id when it reaches it. The HTTP layer turns them into the cursors partners see, and back, binding each to
 * its list and signing it (domain/cursors.ts), so no id-shaped string from outside is ever taken as a position.
 * Rows inserted while a client pages are newer than every cursor, so they land before the first page: nothing is
 * skipped or repeated.
 */
export const DEFAULT_PAGE_SIZE = 20;

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

/** The page to read: one row more than asked, to learn whether another page follows. */
export function pageOf(request: PageRequest): Page {
  const take = (request.limit ?? DEFAULT_PAGE_SIZE) + 1;
  return request.after === undefined ? { take } : { take, beforeId: request.after };
}

/**
 * The one way a list is read (issue 22: it was written out eight times). Two statements, sent together:
 * - `rows`: the page's window, newest first, through an index whose order is the list's (`newestFirst` gives
 *   Prisma's arguments), so a page touches `limit + 1` rows wherever it starts;
 * - `totalCount`: never a `count(*)` of the list, which costs O(rows) per page (issue 18). Either a count the
 *   database keeps (prisma/src/counts.ts: updated in the statement that changes the rows), or, for a list a rule bounds
 *   (a request's events: a handful), the count of that bounded list.
 */
export async function readPage<Row extends { id: string }, Node>(
  request: PageRequest,
  list: {
    rows: (page: Page) => Promise<readonly Row[]>;
    totalCount: () => Promise<number>;
    /** (Row is read from `rows`: `present` may take any wider type.) */
    present: (row: NoInfer<Row>) => Node;
  },
): Promise<Connection<Node>> {
  const page = pageOf(request);
  const [rows, totalCount] = await Promise.all([list.rows(page), list.totalCount()]);
  return toConnection(rows, page, totalCount, list.present);
}

/**
 * Prisma's arguments for a page of rows keyed by `key` (a time-ordered id, or the id of the row a row stands for:
 * a membership stands for its tenant in the caller's tenant list), newest first. Spread `where` into the list's own.
 */
export function newestFirst<Key extends string>(page: Page, key: Key) {
  return {
    where: (page.beforeId === undefined ? {} : { [key]: { lt: page.beforeId } }) as Partial<
      Record<Key, { lt: string }>
    >,
    orderBy: { [key]: 'desc' } as Record<Key, 'desc'>,
    take: page.take,
  };
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
