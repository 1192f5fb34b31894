import { createUserWithKey, getUser } from '../domain/users/users';
import { creation, type HandlerMap } from './types';

/** The operations tagged Admin in openapi/api.yaml (authenticated by ADMIN_TOKEN, so without an actor). */
export const admin = {
  adminCreateUser: creation(
    ({ db, body, heldKey }) => createUserWithKey(db, body, heldKey),
    // The user, where the operator token reads it (not /me, which is the caller's and takes an API key).
    (created) => ({ status: 201, body: created, location: `/admin/users/${created.user.id}` }),
  ),

  adminGetUser: async ({ db, params }) => ({ status: 200, body: { user: await getUser(db, params.user_id) } }),
} satisfies Partial<HandlerMap>;
