import { createApiKey as create } from '../../domain/api-keys/api-keys';
import type { Handler } from '../../http/handler';

export const createApiKey: Handler<'createApiKey'> = async ({ db, actor, body }) => {
  const apiKey = await create(db, actor, body.name);
  return { status: 201, body: { apiKey }, location: `/v1/api-keys/${apiKey.id}` };
};
