import { actOnRequest } from '../../domain/requests/requests';
import type { Handler } from '../../http/handler';
import { requestRef } from './request-ref';

export const validateRequest: Handler<'validateRequest'> = async ({ db, actor, params, ifMatch }) => ({
  status: 200,
  body: await actOnRequest(db, actor, requestRef(params), 'validate', undefined, ifMatch),
});
