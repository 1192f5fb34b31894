import { actOnRequest } from '../../domain/requests/requests';
import type { Handler } from '../../http/handler';
import { requestRef } from './request-ref';

export const earlyValidateRequest: Handler<'earlyValidateRequest'> = async ({ db, actor, params, ifMatch }) => ({
  status: 200,
  body: await actOnRequest(db, actor, requestRef(params), 'early_validate', undefined, ifMatch),
});
