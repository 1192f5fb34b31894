import { createWebhookEndpoint as create } from '../../domain/webhooks/endpoints';
import type { Handler } from '../../http/handler';

export const createWebhookEndpoint: Handler<'createWebhookEndpoint'> = async ({
  db,
  actor,
  params,
  body,
  webhooks,
}) => {
  const webhookEndpoint = await create(db, actor, params.tenant_id, body, webhooks);
  return {
    status: 201,
    body: { webhookEndpoint },
    location: `/v1/tenants/${params.tenant_id}/webhook-endpoints/${webhookEndpoint.id}`,
  };
};
