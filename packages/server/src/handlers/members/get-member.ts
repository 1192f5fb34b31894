import { getMember as get } from '../../domain/members/members';
import type { Handler } from '../../http/handler';

export const getMember: Handler<'getMember'> = async ({ db, actor, params }) => ({
  status: 200,
  body: { member: await get(db, actor, params.tenant_id, params.user_id) },
});
