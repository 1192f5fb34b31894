import { listEvents } from '../domain/events/feed';
import {
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  getWebhookEndpoint,
  listWebhookDeliveries,
  listWebhookEndpoints,
  retryWebhookDelivery,
  rotateWebhookEndpointSecret,
  testWebhookEndpoint,
  updateWebhookEndpoint,
} from '../webhooks/endpoints';
import { creation, type HandlerMap } from './types';

/** The operations tagged Webhooks in openapi/api.yaml, in the spec's order. */
export const webhooks = {
  listEvents: async ({ db, actor, params, query }) => ({
    status: 200,
    body: { events: await listEvents(db, actor, params.tenant_id, query) },
  }),

  listWebhookEndpoints: async ({ db, actor, params, query }) => ({
    status: 200,
    body: { webhookEndpoints: await listWebhookEndpoints(db, actor, params.tenant_id, query) },
  }),

  createWebhookEndpoint: creation(
    ({ db, actor, params, body, webhooks, heldKey }) =>
      createWebhookEndpoint(db, actor, params.tenant_id, body, webhooks, heldKey),
    (webhookEndpoint, params) => ({
      status: 201,
      body: { webhookEndpoint },
      location: `/tenants/${params.tenant_id}/webhook-endpoints/${webhookEndpoint.id}`,
    }),
  ),

  getWebhookEndpoint: async ({ db, actor, params }) => ({
    status: 200,
    body: { webhookEndpoint: await getWebhookEndpoint(db, actor, params.tenant_id, params.endpoint_id) },
  }),

  updateWebhookEndpoint: async ({ db, actor, params, body, webhooks }) => ({
    status: 200,
    body: {
      webhookEndpoint: await updateWebhookEndpoint(db, actor, {
        tenantId: params.tenant_id,
        endpointId: params.endpoint_id,
        changes: body,
        settings: webhooks,
      }),
    },
  }),

  deleteWebhookEndpoint: async ({ db, actor, params }) => {
    await deleteWebhookEndpoint(db, actor, params.tenant_id, params.endpoint_id);
    return { status: 204 };
  },

  rotateWebhookEndpointSecret: async ({ db, actor, params }) => ({
    status: 200,
    body: { webhookEndpoint: await rotateWebhookEndpointSecret(db, actor, params.tenant_id, params.endpoint_id) },
  }),

  testWebhookEndpoint: async ({ db, actor, params }) => ({
    status: 202,
    body: { delivery: await testWebhookEndpoint(db, actor, params.tenant_id, params.endpoint_id) },
  }),

  listWebhookDeliveries: async ({ db, actor, params, query }) => ({
    status: 200,
    body: { deliveries: await listWebhookDeliveries(db, actor, params.tenant_id, params.endpoint_id, query) },
  }),

  retryWebhookDelivery: async ({ db, actor, params }) => ({
    status: 202,
    body: {
      delivery: await retryWebhookDelivery(db, actor, params.tenant_id, params.endpoint_id, params.delivery_id),
    },
  }),
} satisfies Partial<HandlerMap>;
