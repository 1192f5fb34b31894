import { updateMember as update } from '../../domain/members/members';
import type { Handler } from '../../http/handler';

export const updateMember: Handler<'updateMember'> = async ({ db, actor, params, body, ifMatch }) => ({
  status: 200,
  body: { member: await update(db, actor, params.tenant_id, params.user_id, body.role, ifMatch) },
});
