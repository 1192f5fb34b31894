import { rotateWebhookEndpointSecret as rotate } from '../../domain/webhooks/endpoints';
import type { Handler } from '../../http/handler';

export const rotateWebhookEndpointSecret: Handler<'rotateWebhookEndpointSecret'> = async ({ db, actor, params }) => ({
  status: 200,
  body: { webhookEndpoint: await rotate(db, actor, params.tenant_id, params.endpoint_id) },
});
