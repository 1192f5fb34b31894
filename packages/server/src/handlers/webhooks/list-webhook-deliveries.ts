import { listWebhookDeliveries as list } from '../../domain/webhooks/endpoints';
import type { Handler } from '../../http/handler';

export const listWebhookDeliveries: Handler<'listWebhookDeliveries'> = async ({ db, actor, params, query }) => ({
  status: 200,
  body: { deliveries: await list(db, actor, params.tenant_id, params.endpoint_id, query) },
});
