import { renameTenant } from '../../domain/tenants/tenants';
import type { Handler } from '../../http/handler';

export const updateTenant: Handler<'updateTenant'> = async ({ db, actor, params, body, ifMatch }) => ({
  status: 200,
  body: { tenant: await renameTenant(db, actor, params.tenant_id, body.name, ifMatch) },
});
