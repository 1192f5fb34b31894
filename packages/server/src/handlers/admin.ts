import { createUserWithKey, getUser } from '../domain/users/users';
import type { HandlerMap } from '../http/handler';

/** The operations tagged Admin in openapi/api.yaml (authenticated by ADMIN_TOKEN, so without an actor). */
export const admin = {
  adminCreateUser: async ({ db, body }) => {
    const created = await createUserWithKey(db, body);
    // The user, where the operator token reads it (not /me, which is the caller's and takes an API key).
    return { status: 201, body: created, location: `/admin/users/${created.user.id}` };
  },

  adminGetUser: async ({ db, params }) => ({ status: 200, body: { user: await getUser(db, params.user_id) } }),
} satisfies Partial<HandlerMap>;
