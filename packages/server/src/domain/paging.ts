import { isId } from '../db/ids';
import { ProblemError } from './errors';

/**
 * Keyset paging over time-ordered ids (UUIDv7), newest first. A cursor is the id of the last item of a page,
 * wrapped so clients treat it as opaque. Rows inserted while a client pages are newer than every cursor, so
 * they land before the first page: nothing is skipped or repeated.
 */
export const DEFAULT_PAGE_SIZE = 20;

export interface PageRequest {
  limit?: number;
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

const CURSOR_VERSION = 'v1:';

export function encodeCursor(id: string): string {
  return Buffer.from(CURSOR_VERSION + id).toString('base64url');
}

export function decodeCursor(cursor: string): string {
  const decoded = Buffer.from(cursor, 'base64url').toString('utf8');
  const id = decoded.slice(CURSOR_VERSION.length);
  if (!decoded.startsWith(CURSOR_VERSION) || !isId(id)) {
    throw new ProblemError('invalid_cursor', 'The `after` cursor is not one this API returned.', {
      errors: [{ path: '/query/after', message: 'must be the endCursor of a previous page' }],
    });
  }
  return id;
}

/** The page to read: one row more than asked, to learn whether another page follows. */
export function pageOf(request: PageRequest): Page {
  const take = (request.limit ?? DEFAULT_PAGE_SIZE) + 1;
  return request.after === undefined ? { take } : { take, beforeId: decodeCursor(request.after) };
}

/**
 * The one way a list is read (issue 22: it was written out eight times). Two statements, sent together:
 * - `rows`: the page's window, newest first, through an index whose order is the list's (`newestFirst` gives
 *   Prisma's arguments), so a page touches `limit + 1` rows wherever it starts;
 * - `totalCount`: never a `count(*)` of the list, which costs O(rows) per page (issue 18). Either a count the
 *   database keeps (db/counts.ts: updated in the statement that changes the rows), or, for a list a rule bounds
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
  const edges = kept.map((row) => ({ cursor: encodeCursor(row.id), node: present(row) }));
  return { totalCount, edges, pageInfo: { hasNextPage, endCursor: edges.at(-1)?.cursor ?? null } };
}
