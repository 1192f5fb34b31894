import { revokeApiKey as revoke } from '../../domain/api-keys/api-keys';
import type { Handler } from '../../http/handler';

export const revokeApiKey: Handler<'revokeApiKey'> = async ({ db, actor, params }) => ({
  status: 200,
  body: { apiKey: await revoke(db, actor, params.api_key_id) },
});
