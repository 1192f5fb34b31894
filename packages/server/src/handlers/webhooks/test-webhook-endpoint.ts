import { testWebhookEndpoint as test } from '../../domain/webhooks/endpoints';
import type { Handler } from '../../http/handler';

export const testWebhookEndpoint: Handler<'testWebhookEndpoint'> = async ({ db, actor, params }) => ({
  status: 202,
  body: { delivery: await test(db, actor, params.tenant_id, params.endpoint_id) },
});
