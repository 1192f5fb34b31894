import { getMe as findMe } from '../../domain/users/users';
import type { Handler } from '../../http/handler';

export const getMe: Handler<'getMe'> = async ({ db, actor }) => ({
  status: 200,
  body: { user: await findMe(db, actor) },
});
