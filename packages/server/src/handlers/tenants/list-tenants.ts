import { listTenants as list } from '../../domain/tenants/tenants';
import type { Handler } from '../../http/handler';

export const listTenants: Handler<'listTenants'> = async ({ db, actor, query }) => ({
  status: 200,
  body: { tenants: await list(db, actor, query) },
});
