import { createUserWithKey } from '../../domain/users/users';
import type { Handler } from '../../http/handler';

export const adminCreateUser: Handler<'adminCreateUser'> = async ({ db, body }) => {
  const created = await createUserWithKey(db, body);
  return { status: 201, body: created, location: `/v1/me` };
};
