import createFetchClient, { type Client, type FetchOptions, type FetchResponse, type Middleware } from 'openapi-fetch';
import type { operations, paths } from '@works-api/api-types';
import { operationRoutes } from './operations';
import { type Paginate, paginator } from './paginate';
import { problemResponses, type UnexpectedResponseProblem } from './problem';
import { type RetryOptions, retryingFetch } from './retry';
import type { Exact, RequiredKeysOf } from './types';

export interface ClientOptions {
  /** Where the server listens, with or without the `/v1` base path: `https://api.example.com`. */
  baseUrl: string;
  /** An API key (`wk_…`), sent as `Authorization: Bearer <apiKey>`. */
  apiKey?: string | undefined;
  /** A fetch implementation (defaults to the global one). */
  fetch?: typeof globalThis.fetch | undefined;
  /** Retries of 429, 503 and network errors for idempotent requests; `false` turns them off. */
  retry?: RetryOptions | false | undefined;
  /** Makes the Idempotency-Key sent with creating POSTs that were given none (default `crypto.randomUUID()`). */
  idempotencyKey?: (() => string) | undefined;
  /** Headers sent with every request (a `User-Agent` for your integration, say). */
  headers?: Record<string, string> | undefined;
  /**
   * Whether the browser sends the session cookie (a person signed in by email, `POST /v1/sessions`): fetch's
   * `credentials`. A page on the server's own origin (the console) needs `same-origin`, the default; never set an
   * `apiKey` as well (a request with both is refused).
   */
  credentials?: RequestCredentials | undefined;
}

/** Error bodies are `application/problem+json`, successes `application/json`: this media pattern types both. */
type Media = `${string}/${string}json`;
type Routes = typeof operationRoutes;
export type OperationId = keyof Routes;

/** Optional properties also take `undefined` (sent as absent), even under `exactOptionalPropertyTypes`. */
type UndefinedAllowed<T> = { [P in keyof T]: object extends Pick<T, P> ? T[P] | undefined : T[P] };
/**
 * An operation whose optional query parameters also take `undefined`, so that `{ after: page.endCursor ?? undefined }`
 * or a `string | undefined` variable can be passed as they are.
 */
type WithLooseQuery<Operation> = Operation extends { parameters: infer Parameters }
  ? Omit<Operation, 'parameters'> & {
      parameters: { [P in keyof Parameters]: P extends 'query' ? UndefinedAllowed<Parameters[P]> : Parameters[P] };
    }
  : Operation;
type OperationInit<K extends OperationId> = Omit<
  FetchOptions<WithLooseQuery<operations[K]>>,
  'parseAs' | 'baseUrl' | 'fetch' | 'querySerializer' | 'bodySerializer' | 'pathSerializer'
>;
type Fetched<K extends OperationId> = FetchResponse<operations[K], object, Media>;

/**
 * The errors of an operation: a union of the problem types it declares, discriminated by `code` (narrow on it to
 * read a type's own fields, such as `currentStatus` on `invalid_transition`), or `unexpected_response`.
 */
export type OperationProblem<K extends OperationId> =
  Extract<Fetched<K>, { error: unknown }>['error'] | UnexpectedResponseProblem;

/** The result of an operation: `{ data, response }` on success, `{ error, response }` otherwise. */
export type OperationResult<K extends OperationId> =
  Exclude<Fetched<K>, { error: unknown }> | { data?: never; error: OperationProblem<K>; response: Response };

/**
 * One method per operation of the contract, named by its operationId: `client.createTenant({ body })`,
 * `client.getWork({ params: { path: { tenant_id, work_id } } })`. The options are openapi-fetch's, checked
 * exactly: a wrong body, a missing path parameter or an unknown option does not compile.
 */
export type OperationMethods = {
  [K in OperationId]: (
    ...init: RequiredKeysOf<OperationInit<K>> extends never ? [init?: OperationInit<K>] : [init: OperationInit<K>]
  ) => Promise<OperationResult<K>>;
};

/**
 * The generic openapi-fetch methods (`GET`, `POST`, ... by path), one method per operation, and `paginate`: every
 * item of a list operation, fetched page by page as the loop asks for them.
 *
 *     for await (const work of client.paginate('listWorks', { params: { path: { tenant_id } }, limit: 500 })) { … }
 */
export type WorksApiClient = Client<paths, Media> & OperationMethods & { paginate: Paginate };

/** The table is generated from the spec; a stale one (an operation missing or left over) fails to compile. */
const routesCoverTheContract: Exact<OperationId, keyof operations> = true;
void routesCoverTheContract;

const creatingRoutes = new Set(
  Object.values(operationRoutes)
    .filter((route) => route.creates)
    .map((route) => `${route.method.toUpperCase()} ${route.path}`),
);

/**
 * A typed client for every operation of openapi/api.yaml.
 *
 * - Sends `Authorization: Bearer <apiKey>` (integrations), or, in a browser, the session cookie (`credentials`).
 * - Sends an `Idempotency-Key` with every POST that creates something, unless the call gave one, so a retried
 *   creation is replayed by the server instead of creating twice.
 * - Retries 429 and 503 answers and network errors, with backoff and honouring `Retry-After`, but only for
 *   GET, PUT and DELETE and for POSTs that carry an Idempotency-Key.
 * - Every error result is a typed Problem (`error.code` to switch on); `unwrap()` turns it into a throw.
 */
export function createClient(options: ClientOptions): WorksApiClient {
  const { baseUrl, apiKey, retry, headers, credentials } = options;
  const newKey = options.idempotencyKey ?? (() => globalThis.crypto.randomUUID());
  const fetchImpl = () => options.fetch ?? globalThis.fetch;
  const root = baseUrl.replace(/\/+$/, '');

  const client = createFetchClient<paths, Media>({
    baseUrl: root.endsWith('/v1') ? root : `${root}/v1`,
    fetch: retry === false ? (request: Request) => fetchImpl()(request) : retryingFetch(fetchImpl, retry),
    ...(headers && { headers }),
    ...(credentials && { credentials }),
  });
  client.use(problemResponses, idempotencyKeys(newKey));
  if (apiKey !== undefined) client.use(bearer(apiKey));

  const call = (operationId: OperationId, init?: object) => {
    const route = operationRoutes[operationId];
    return client.request(route.method as never, route.path as never, init as never);
  };
  const methods = Object.fromEntries(
    Object.keys(operationRoutes).map((operationId) => [
      operationId,
      (init?: object) => call(operationId as OperationId, init),
    ]),
  ) as unknown as OperationMethods;
  return Object.assign(client, methods, { paginate: paginator(call) });
}

const bearer = (token: string): Middleware => ({
  onRequest({ request }) {
    request.headers.set('Authorization', `Bearer ${token}`);
    return request;
  },
});

const idempotencyKeys = (newKey: () => string): Middleware => ({
  onRequest({ request, schemaPath }) {
    if (!creatingRoutes.has(`${request.method} ${schemaPath}`) || request.headers.has('Idempotency-Key'))
      return undefined;
    request.headers.set('Idempotency-Key', newKey());
    return request;
  },
});
