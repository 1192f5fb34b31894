import { getWork as get } from '../../domain/works/works';
import type { Handler } from '../../http/handler';

export const getWork: Handler<'getWork'> = async ({ db, actor, params }) => ({
  status: 200,
  body: { work: await get(db, actor, params.tenant_id, params.work_id) },
});
