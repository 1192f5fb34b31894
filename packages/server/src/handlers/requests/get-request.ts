import { getRequest as get } from '../../domain/requests/requests';
import type { Handler } from '../../http/handler';
import { requestRef } from './request-ref';

export const getRequest: Handler<'getRequest'> = async ({ db, actor, params }) => ({
  status: 200,
  body: { request: await get(db, actor, requestRef(params)) },
});
