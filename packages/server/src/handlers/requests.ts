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
import { createRequestBatch } from '../domain/requests/batches';
import type { RequestAction } from '../domain/requests/state-machine';
import { creation, type HandlerContext, type HandlerMap } from './types';

/** What the four action operations share: their path, their If-Match, and who calls. */
type ActionContext = Pick<
  HandlerContext<'cancelRequest' | 'confirmRequest' | 'earlyValidateRequest' | 'validateRequest'>,
  'db' | 'actor' | 'params' | 'ifMatch'
>;

/** The path parameters every operation on one request shares. */
const requestRef = (params: { tenant_id: string; work_id: string; id: string }): RequestRef => ({
  tenantId: params.tenant_id,
  workId: params.work_id,
  requestId: params.id,
});

/** An action on one request: the four action operations differ only in the action and in where the note is. */
const act = async ({ db, actor, params, ifMatch }: ActionContext, action: RequestAction, note?: string) => ({
  status: 200 as const,
  body: await actOnRequest(db, actor, { ref: requestRef(params), action, note, precondition: ifMatch }),
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

  createRequest: creation(
    ({ db, actor, params, body, limits, heldKey }) =>
      createRequest(db, actor, params.tenant_id, params.work_id, body, limits, heldKey),
    (request, params) => ({
      status: 201,
      body: { request },
      location: `/tenants/${params.tenant_id}/works/${params.work_id}/requests/${request.id}`,
    }),
  ),

  createRequestBatch: creation(
    ({ db, actor, params, body, limits, heldKey }) =>
      createRequestBatch(db, actor, params.tenant_id, params.work_id, body, limits, heldKey),
    // The batch's requests are in the work's list: that is where `Location` points.
    (batch, params) => ({
      status: 201,
      body: { batch },
      location: `/tenants/${params.tenant_id}/works/${params.work_id}/requests`,
    }),
  ),

  getRequest: async ({ db, actor, params }) => ({
    status: 200,
    body: { request: await getRequest(db, actor, requestRef(params)) },
  }),

  listRequestEvents: async ({ db, actor, params, query }) => ({
    status: 200,
    body: { events: await listRequestEvents(db, actor, requestRef(params), query) },
  }),

  cancelRequest: async (context) => act(context, 'cancel', context.body?.reason),
  confirmRequest: async (context) => act(context, 'confirm', context.body?.answer),
  earlyValidateRequest: async (context) => act(context, 'early_validate'),
  validateRequest: async (context) => act(context, 'validate'),

  resendRequest: async ({ db, actor, params, limits }) => ({
    status: 200,
    body: { request: await resendRequest(db, actor, requestRef(params), limits) },
  }),
} satisfies Partial<HandlerMap>;
