import { removeMember as remove } from '../../domain/members/members';
import type { Handler } from '../../http/handler';

export const removeMember: Handler<'removeMember'> = async ({ db, actor, params }) => {
  await remove(db, actor, params.tenant_id, params.user_id);
  return { status: 204 };
};
