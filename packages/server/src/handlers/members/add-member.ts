import { addMember as add } from '../../domain/members/members';
import type { Handler } from '../../http/handler';

export const addMember: Handler<'addMember'> = async ({ db, actor, params, body }) => {
  const member = await add(db, actor, params.tenant_id, body);
  return { status: 201, body: { member }, location: `/v1/tenants/${params.tenant_id}/members/${member.user.id}` };
};
