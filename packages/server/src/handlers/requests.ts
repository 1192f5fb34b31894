import {
  actOnRequest,
  createRequest,
  getRequest,
  listRequestEvents,
  listRequests,
  listTenantRequests,
  type RequestRef,
  resendRequest,
} from '../domain/requests/requests';
import type { Schemas } from '../domain/schemas';
import type { HandlerMap } from '../http/handler';

/** The path parameters every operation on one request shares. */
const requestRef = (params: { tenant_id: string; work_id: string; id: string }): RequestRef => ({
  tenantId: params.tenant_id,
  workId: params.work_id,
  requestId: params.id,
});

/** The operations tagged Requests in openapi/api.yaml, in the spec's order. */
export const requests = {
  listTenantRequests: async ({ db, actor, params, query }) => ({
    status: 200,
    body: { requests: await listTenantRequests(db, actor, params.tenant_id, query) },
  }),

  listRequests: async ({ db, actor, params, query }) => ({
    status: 200,
    body: { requests: await listRequests(db, actor, params.tenant_id, params.work_id, query) },
  }),

  createRequest: async ({ db, actor, params, body, limits, outcome }) => {
    const created = (request: Schemas['Request']) =>
      ({
        status: 201,
        body: { request },
        location: `/tenants/${params.tenant_id}/works/${params.work_id}/requests/${request.id}`,
      }) as const;
    return created(await createRequest(db, actor, params.tenant_id, params.work_id, body, limits, outcome?.(created)));
  },

  getRequest: async ({ db, actor, params }) => ({
    status: 200,
    body: { request: await getRequest(db, actor, requestRef(params)) },
  }),

  listRequestEvents: async ({ db, actor, params, query }) => ({
    status: 200,
    body: { events: await listRequestEvents(db, actor, requestRef(params), query) },
  }),

  cancelRequest: async ({ db, actor, params, body, ifMatch }) => ({
    status: 200,
    body: await actOnRequest(db, actor, {
      ref: requestRef(params),
      action: 'cancel',
      note: body?.reason,
      precondition: ifMatch,
    }),
  }),

  confirmRequest: async ({ db, actor, params, body, ifMatch }) => ({
    status: 200,
    body: await actOnRequest(db, actor, {
      ref: requestRef(params),
      action: 'confirm',
      note: body?.answer,
      precondition: ifMatch,
    }),
  }),

  earlyValidateRequest: async ({ db, actor, params, ifMatch }) => ({
    status: 200,
    body: await actOnRequest(db, actor, { ref: requestRef(params), action: 'early_validate', precondition: ifMatch }),
  }),

  validateRequest: async ({ db, actor, params, ifMatch }) => ({
    status: 200,
    body: await actOnRequest(db, actor, { ref: requestRef(params), action: 'validate', precondition: ifMatch }),
  }),

  resendRequest: async ({ db, actor, params, limits }) => ({
    status: 200,
    body: { request: await resendRequest(db, actor, requestRef(params), limits) },
  }),
} satisfies Partial<HandlerMap>;
