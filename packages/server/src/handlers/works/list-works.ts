import { listWorks as list } from '../../domain/works/works';
import type { Handler } from '../../http/handler';

export const listWorks: Handler<'listWorks'> = async ({ db, actor, params, query }) => ({
  status: 200,
  body: { works: await list(db, actor, params.tenant_id, query) },
});
