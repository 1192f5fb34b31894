import { updateWork as update } from '../../domain/works/works';
import type { Handler } from '../../http/handler';

export const updateWork: Handler<'updateWork'> = async ({ db, actor, params, body, ifMatch }) => ({
  status: 200,
  body: { work: await update(db, actor, params.tenant_id, params.work_id, body, ifMatch) },
});
