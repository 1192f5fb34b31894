import { createApiKey, listApiKeys, revokeApiKey } from '../domain/api-keys/api-keys';
import { getMe } from '../domain/users/users';
import { creation, type HandlerMap } from './types';

/** The operations tagged Account in openapi/api.yaml, in the spec's order. */
export const account = {
  getMe: async ({ db, actor }) => ({
    status: 200,
    body: { user: await getMe(db, actor) },
  }),

  listApiKeys: async ({ db, actor, query }) => ({
    status: 200,
    body: { apiKeys: await listApiKeys(db, actor, query) },
  }),

  createApiKey: creation(
    ({ db, actor, body, limits, heldKey }) => createApiKey(db, actor, body, limits.apiKeysPerUser, heldKey),
    (apiKey) => ({ status: 201, body: { apiKey }, location: `/api-keys/${apiKey.id}` }),
  ),

  revokeApiKey: async ({ db, actor, params }) => ({
    status: 200,
    body: { apiKey: await revokeApiKey(db, actor, params.api_key_id) },
  }),
} satisfies Partial<HandlerMap>;
