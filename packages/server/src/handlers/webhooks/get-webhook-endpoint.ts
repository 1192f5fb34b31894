import { getWebhookEndpoint as get } from '../../domain/webhooks/endpoints';
import type { Handler } from '../../http/handler';

export const getWebhookEndpoint: Handler<'getWebhookEndpoint'> = async ({ db, actor, params }) => ({
  status: 200,
  body: { webhookEndpoint: await get(db, actor, params.tenant_id, params.endpoint_id) },
});
