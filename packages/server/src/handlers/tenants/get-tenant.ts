import { getTenant as get } from '../../domain/tenants/tenants';
import type { Handler } from '../../http/handler';

export const getTenant: Handler<'getTenant'> = async ({ db, actor, params }) => ({
  status: 200,
  body: { tenant: await get(db, actor, params.tenant_id) },
});
