import { retryWebhookDelivery as retry } from '../../domain/webhooks/endpoints';
import type { Handler } from '../../http/handler';

export const retryWebhookDelivery: Handler<'retryWebhookDelivery'> = async ({ db, actor, params }) => ({
  status: 202,
  body: { delivery: await retry(db, actor, params.tenant_id, params.endpoint_id, params.delivery_id) },
});
