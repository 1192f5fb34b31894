import { deleteWebhookEndpoint as remove } from '../../domain/webhooks/endpoints';
import type { Handler } from '../../http/handler';

export const deleteWebhookEndpoint: Handler<'deleteWebhookEndpoint'> = async ({ db, actor, params }) => {
  await remove(db, actor, params.tenant_id, params.endpoint_id);
  return { status: 204 };
};
