import { listRequests as list } from '../../domain/requests/requests';
import type { Handler } from '../../http/handler';

export const listRequests: Handler<'listRequests'> = async ({ db, actor, params, query }) => ({
  status: 200,
  body: { requests: await list(db, actor, params.tenant_id, params.work_id, query) },
});
