import { actOnRequest } from '../../domain/requests/requests';
import type { Handler } from '../../http/handler';
import { requestRef } from './request-ref';

export const cancelRequest: Handler<'cancelRequest'> = async ({ db, actor, params, body, ifMatch }) => ({
  status: 200,
  body: await actOnRequest(db, actor, requestRef(params), 'cancel', body?.reason, ifMatch),
});
