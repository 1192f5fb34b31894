import { createUserWithKey } from '../domain/users/users';
import type { HandlerMap } from '../http/handler';

/** The operations tagged Admin in openapi/api.yaml (authenticated by ADMIN_TOKEN, so without an actor). */
export const admin = {
  adminCreateUser: async ({ db, body }) => {
    const created = await createUserWithKey(db, body);
    return { status: 201, body: created, location: '/me' };
  },
} satisfies Partial<HandlerMap>;
