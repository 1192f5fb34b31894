import { updateWebhookEndpoint as update } from '../../domain/webhooks/endpoints';
import type { Handler } from '../../http/handler';

export const updateWebhookEndpoint: Handler<'updateWebhookEndpoint'> = async ({
  db,
  actor,
  params,
  body,
  webhooks,
}) => ({
  status: 200,
  body: { webhookEndpoint: await update(db, actor, params.tenant_id, params.endpoint_id, body, webhooks) },
});
