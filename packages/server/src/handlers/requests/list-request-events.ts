import { listRequestEvents as list } from '../../domain/requests/requests';
import type { Handler } from '../../http/handler';
import { requestRef } from './request-ref';

export const listRequestEvents: Handler<'listRequestEvents'> = async ({ db, actor, params, query }) => ({
  status: 200,
  body: { events: await list(db, actor, requestRef(params), query) },
});
