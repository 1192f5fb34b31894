import { listApiKeys as list } from '../../domain/api-keys/api-keys';
import type { Handler } from '../../http/handler';

export const listApiKeys: Handler<'listApiKeys'> = async ({ db, actor, query }) => ({
  status: 200,
  body: { apiKeys: await list(db, actor, query) },
});
