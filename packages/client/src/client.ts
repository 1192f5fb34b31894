import createFetchClient, { type Client, type FetchOptions, type FetchResponse, type Middleware } from 'openapi-fetch';
import type { operations, paths } from '@works-api/api-types';
import { operationRoutes } from './operations';
import { problemResponses } from './problem';
import { type RetryOptions, retryingFetch } from './retry';

export interface ClientOptions {
  /** Where the server listens, with or without the `/v1` base path: `https://api.example.com`. */
  baseUrl: string;
  /** An API key (`wk_…`), sent as `Authorization: Bearer <apiKey>`. */
  apiKey?: string;
  /** A fetch implementation (defaults to the global one). */
  fetch?: typeof globalThis.fetch;
  /** Retries of 429, 503 and network errors for idempotent requests; `false` turns them off. */
  retry?: RetryOptions | false;
  /** Makes the Idempotency-Key sent with creating POSTs that were given none (default `crypto.randomUUID()`). */
  idempotencyKey?: () => string;
  /** Headers sent with every request (a `User-Agent` for your integration, say). */
  headers?: Record<string, string>;
}

/** Error bodies are `application/problem+json`, successes `application/json`: this media pattern types both. */
type Media = `${string}/${string}json`;
type Routes = typeof operationRoutes;
export type OperationId = keyof Routes;

type RequiredKeysOf<T> = { [K in keyof T]-?: object extends Pick<T, K> ? never : K }[keyof T];
type OperationInit<K extends OperationId> = Omit<
  FetchOptions<operations[K]>,
  'parseAs' | 'baseUrl' | 'fetch' | 'querySerializer' | 'bodySerializer' | 'pathSerializer'
>;
/** The result of an operation: `{ data, response }` on success, `{ error: Problem, response }` otherwise. */
export type OperationResult<K extends OperationId> = FetchResponse<operations[K], object, Media>;

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

/** The generic openapi-fetch methods (`GET`, `POST`, ... by path) plus one method per operation. */
export type WorksApiClient = Client<paths, Media> & OperationMethods;

/** The table is generated from the spec; a stale one (an operation missing or left over) fails to compile. */
type Exact<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
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
 * - Sends `Authorization: Bearer <apiKey>`.
 * - Sends an `Idempotency-Key` with every POST that creates something, unless the call gave one, so a retried
 *   creation is replayed by the server instead of creating twice.
 * - Retries 429 and 503 answers and network errors, with backoff and honouring `Retry-After`, but only for
 *   GET, PUT and DELETE and for POSTs that carry an Idempotency-Key.
 * - Every error result is a typed Problem (`error.code` to switch on); `unwrap()` turns it into a throw.
 */
export function createClient(options: ClientOptions): WorksApiClient {
  const { baseUrl, apiKey, retry, headers } = options;
  const newKey = options.idempotencyKey ?? (() => globalThis.crypto.randomUUID());
  const fetchImpl = () => options.fetch ?? globalThis.fetch;
  const root = baseUrl.replace(/\/+$/, '');

  const client = createFetchClient<paths, Media>({
    baseUrl: root.endsWith('/v1') ? root : `${root}/v1`,
    fetch: retry === false ? (request: Request) => fetchImpl()(request) : retryingFetch(fetchImpl, retry),
    ...(headers && { headers }),
  });
  client.use(problemResponses, idempotencyKeys(newKey));
  if (apiKey !== undefined) client.use(bearer(apiKey));

  const methods = Object.fromEntries(
    Object.entries(operationRoutes).map(([operationId, route]) => [
      operationId,
      (init?: object) => client.request(route.method as never, route.path as never, init as never),
    ]),
  ) as unknown as OperationMethods;
  return Object.assign(client, methods);
}

const bearer = (token: string): Middleware => ({
  onRequest({ request }) {
    request.headers.set('Authorization', `Bearer ${token}`);
    return request;
  },
});

const idempotencyKeys = (newKey: () => string): Middleware => ({
  onRequest({ request, schemaPath }) {
    if (!creatingRoutes.has(`${request.method} ${schemaPath}`) || request.headers.has('Idempotency-Key')) return undefined;
    request.headers.set('Idempotency-Key', newKey());
    return request;
  },
});
