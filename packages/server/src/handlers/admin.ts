import { type CreatedUser, createUserWithKey, getUser } from '../domain/users/users';
import type { HandlerMap } from './types';

/** The operations tagged Admin in openapi/api.yaml (authenticated by ADMIN_TOKEN, so without an actor). */
export const admin = {
  adminCreateUser: async ({ db, body, outcome }) => {
    // The user, where the operator token reads it (not /me, which is the caller's and takes an API key).
    const answer = (created: CreatedUser) =>
      ({ status: 201, body: created, location: `/admin/users/${created.user.id}` }) as const;
    return answer(await createUserWithKey(db, body, outcome?.(answer)));
  },

  adminGetUser: async ({ db, params }) => ({ status: 200, body: { user: await getUser(db, params.user_id) } }),
} satisfies Partial<HandlerMap>;
