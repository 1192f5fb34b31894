import { listWebhookEndpoints as list } from '../../domain/webhooks/endpoints';
import type { Handler } from '../../http/handler';

export const listWebhookEndpoints: Handler<'listWebhookEndpoints'> = async ({ db, actor, params, query }) => ({
  status: 200,
  body: { webhookEndpoints: await list(db, actor, params.tenant_id, query) },
});
