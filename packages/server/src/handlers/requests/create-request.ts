import { createRequest as create } from '../../domain/requests/requests';
import type { Handler } from '../../http/handler';

export const createRequest: Handler<'createRequest'> = async ({ db, actor, params, body }) => {
  const request = await create(db, actor, params.tenant_id, params.work_id, body);
  return {
    status: 201,
    body: { request },
    location: `/v1/tenants/${params.tenant_id}/works/${params.work_id}/requests/${request.id}`,
  };
};
