import { createWork, discardWork, getWork, listWorks, undiscardWork, updateWork } from '../domain/works/works';
import { creation, type HandlerMap } from './types';

/** The operations tagged Works in openapi/api.yaml, in the spec's order. */
export const works = {
  listWorks: async ({ db, actor, params, query }) => ({
    status: 200,
    body: { works: await listWorks(db, actor, params.tenant_id, query) },
  }),

  createWork: creation(
    ({ db, actor, params, body, heldKey }) => createWork(db, actor, params.tenant_id, body, heldKey),
    (work, params) => ({ status: 201, body: { work }, location: `/tenants/${params.tenant_id}/works/${work.id}` }),
  ),

  getWork: async ({ db, actor, params }) => ({
    status: 200,
    body: { work: await getWork(db, actor, params.tenant_id, params.work_id) },
  }),

  updateWork: async ({ db, actor, params, body, ifMatch }) => ({
    status: 200,
    body: {
      work: await updateWork(db, actor, {
        tenantId: params.tenant_id,
        workId: params.work_id,
        changes: body,
        precondition: ifMatch,
      }),
    },
  }),

  discardWork: async ({ db, actor, params }) => ({
    status: 200,
    body: { work: await discardWork(db, actor, params.tenant_id, params.work_id) },
  }),

  undiscardWork: async ({ db, actor, params }) => ({
    status: 200,
    body: { work: await undiscardWork(db, actor, params.tenant_id, params.work_id) },
  }),
} satisfies Partial<HandlerMap>;
