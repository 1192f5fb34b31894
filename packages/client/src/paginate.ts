import type { operations } from '@works-api/api-types';
import { operationRoutes } from './operations';
import { unwrap } from './problem';
import type { Exact, RequiredKeysOf } from './types';

type Routes = typeof operationRoutes;
type OperationId = keyof Routes;

/** The JSON body of an operation's 200 response. */
type OkBody<K extends OperationId> = operations[K]['responses'] extends {
  200: { content: { 'application/json': infer Body } };
}
  ? Body
  : never;
type Connection = { edges: Array<{ node: unknown }>; pageInfo: { hasNextPage: boolean; endCursor: string | null } };
/** The property of the 200 body that holds the page, when that body is `{ <plural>: Connection }`. */
type ConnectionKey<K extends OperationId> = {
  [P in keyof OkBody<K>]: OkBody<K>[P] extends Connection ? P : never;
}[keyof OkBody<K>];
type QueryOf<K extends OperationId> = NonNullable<operations[K]['parameters']['query']>;

/**
 * The list operations, read from the generated types: a 200 body `{ <plural>: Connection }` and an `after` cursor.
 * A list operation added to the contract is one of them without any change here.
 */
export type ListOperationId = {
  [K in OperationId]: [QueryOf<K>] extends [never]
    ? never
    : 'after' extends keyof QueryOf<K>
      ? [OkBody<K>] extends [never]
        ? never
        : [ConnectionKey<K>] extends [never]
          ? never
          : K
      : never;
}[OperationId];

/** What a list operation pages through: `ListNode<'listWorks'>` is a Work. */
export type ListNode<K extends ListOperationId> = OkBody<K>[ConnectionKey<K>] extends {
  edges: Array<{ node: infer Node }>;
}
  ? Node
  : never;

/** The runtime table (generated from the spec by another route) must name exactly these operations. */
type TableLists = { [K in OperationId]: Routes[K] extends { list: object } ? K : never }[OperationId];
const tableMatchesTypes: Exact<TableLists, ListOperationId> = true;
void tableMatchesTypes;

type ParamsOf<K extends OperationId> = NonNullable<operations[K]['parameters']>;
type PageQuery<K extends ListOperationId> = Omit<QueryOf<K>, 'after' | 'limit'>;
/** An operation's parameters without the two `paginate` sets itself, `after` and `limit`. */
type PageParams<K extends ListOperationId> = {
  [P in keyof ParamsOf<K>]: P extends 'query'
    ? [keyof PageQuery<K>] extends [never]
      ? never
      : PageQuery<K>
    : ParamsOf<K>[P];
};

interface PagingOptions {
  /** Items per request, 1 to the operation's largest `limit` (the default: as few requests as possible). */
  pageSize?: number;
  /** Stop after this many items (default: all of them). */
  limit?: number;
  /** Aborts the request in flight and ends the iteration with the abort's error. */
  signal?: AbortSignal;
  /** Headers sent with every page's request. */
  headers?: Record<string, string>;
}

/** `paginate`'s options: the list's own parameters (required when it has path parameters) and the paging. */
export type PaginateOptions<K extends ListOperationId> = PagingOptions &
  (RequiredKeysOf<PageParams<K>> extends never ? { params?: PageParams<K> } : { params: PageParams<K> });

export type Paginate = <K extends ListOperationId>(
  operationId: K,
  ...options: RequiredKeysOf<PaginateOptions<K>> extends never
    ? [options?: PaginateOptions<K>]
    : [options: PaginateOptions<K>]
) => AsyncGenerator<ListNode<K>, void, undefined>;

/** Sends one operation (the client's method by operationId); named so as not to hide fetch's `Request`. */
type SendOperation = (
  operationId: OperationId,
  init: object,
) => Promise<{ data?: unknown; error?: unknown; response: Response }>;

/**
 * Walks a list operation page by page, following `endCursor` while `hasNextPage`, and yields its items. An error
 * answer ends the iteration with a thrown `ProblemError` (the client's retries have already run).
 */
export function paginator(send: SendOperation): Paginate {
  return async function* paginate(operationId, ...[options]) {
    const list = (operationRoutes[operationId] as { list?: { connection: string; maxPageSize: number } }).list;
    if (!list) throw new TypeError(`${operationId} is not a list operation`);
    const {
      params,
      pageSize = list.maxPageSize,
      limit = Infinity,
      ...init
    } = (options ?? {}) as PagingOptions & {
      params?: { query?: object };
    };
    let after: string | undefined;
    for (let yielded = 0; yielded < limit;) {
      const query = { ...params?.query, limit: Math.min(pageSize, limit - yielded), after };
      const data = unwrap(await send(operationId, { ...init, params: { ...params, query } })) as Record<
        string,
        Connection
      >;
      const page = data[list.connection]!;
      for (const edge of page.edges) {
        yield edge.node as never;
        if (++yielded >= limit) return;
      }
      if (!page.pageInfo.hasNextPage || page.pageInfo.endCursor === null) return;
      after = page.pageInfo.endCursor;
    }
  };
}
