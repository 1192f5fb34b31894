import { setWorkDiscarded } from '../../domain/works/works';
import type { Handler } from '../../http/handler';

export const discardWork: Handler<'discardWork'> = async ({ db, actor, params }) => ({
  status: 200,
  body: { work: await setWorkDiscarded(db, actor, params.tenant_id, params.work_id, true) },
});
