import { createTenant as create } from '../../domain/tenants/tenants';
import type { Handler } from '../../http/handler';

export const createTenant: Handler<'createTenant'> = async ({ db, actor, body }) => {
  const tenant = await create(db, actor, body);
  return { status: 201, body: { tenant }, location: `/v1/tenants/${tenant.id}` };
};
