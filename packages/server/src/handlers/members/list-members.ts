import { listMembers as list } from '../../domain/members/members';
import type { Handler } from '../../http/handler';

export const listMembers: Handler<'listMembers'> = async ({ db, actor, params, query }) => ({
  status: 200,
  body: { members: await list(db, actor, params.tenant_id, query) },
});
