import { createWork as create } from '../../domain/works/works';
import type { Handler } from '../../http/handler';

export const createWork: Handler<'createWork'> = async ({ db, actor, params, body }) => {
  const work = await create(db, actor, params.tenant_id, body);
  return { status: 201, body: { work }, location: `/v1/tenants/${params.tenant_id}/works/${work.id}` };
};
