import createFetchClient, { type Client, type Middleware } from 'openapi-fetch';
import type { components, operations, paths } from '@works-api/api-types';

export type { components, operations, paths };
export type Problem = components['schemas']['Problem'];

export interface ClientOptions {
  /** Where the server listens, with or without the `/v1` base path: `http://localhost:3000`. */
  baseUrl: string;
  /** An API key (`wk_…`), sent as `Authorization: Bearer <apiKey>`. */
  apiKey?: string;
  /** A fetch implementation (defaults to the global one). */
  fetch?: typeof globalThis.fetch;
}

export type WorksApiClient = Client<paths, 'application/json'>;

/** A typed client for every operation of openapi/api.yaml. */
export function createClient({ baseUrl, apiKey, fetch }: ClientOptions): WorksApiClient {
  const root = baseUrl.replace(/\/+$/, '');
  const client = createFetchClient<paths>({
    baseUrl: root.endsWith('/v1') ? root : `${root}/v1`,
    ...(fetch && { fetch }),
  });
  if (apiKey !== undefined) client.use(bearer(apiKey));
  return client;
}

const bearer = (token: string): Middleware => ({
  onRequest({ request }) {
    request.headers.set('Authorization', `Bearer ${token}`);
    return request;
  },
});
