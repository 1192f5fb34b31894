import {
  acceptInvitation,
  declineInvitation,
  deleteInvitation,
  listInvitations,
  listMyInvitations,
} from '../domain/members/invitations';
import { addMember, getMember, listMembers, removeMember, updateMember } from '../domain/members/members';
import { creation, type HandlerMap } from './types';

/** The operations tagged Members in openapi/api.yaml, in the spec's order. */
export const members = {
  listMembers: async ({ db, actor, params, query }) => ({
    status: 200,
    body: { members: await listMembers(db, actor, params.tenant_id, query) },
  }),

  // Always an invitation, whether or not an account has the email: 202, which no URL reads on its own.
  addMember: creation(
    ({ db, actor, params, body, limits, heldKey }) => addMember(db, actor, params.tenant_id, body, limits, heldKey),
    (invitation) => ({ status: 202, body: { invitation } }),
  ),

  getMember: async ({ db, actor, params }) => ({
    status: 200,
    body: { member: await getMember(db, actor, params.tenant_id, params.user_id) },
  }),

  updateMember: async ({ db, actor, params, body, ifMatch }) => ({
    status: 200,
    body: {
      member: await updateMember(db, actor, {
        tenantId: params.tenant_id,
        userId: params.user_id,
        role: body.role,
        precondition: ifMatch,
      }),
    },
  }),

  removeMember: async ({ db, actor, params }) => {
    await removeMember(db, actor, params.tenant_id, params.user_id);
    return { status: 204 };
  },

  listInvitations: async ({ db, actor, params, query }) => ({
    status: 200,
    body: { invitations: await listInvitations(db, actor, params.tenant_id, query) },
  }),

  deleteInvitation: async ({ db, actor, params }) => {
    await deleteInvitation(db, actor, params.tenant_id, params.invitation_id);
    return { status: 204 };
  },

  listMyInvitations: async ({ db, actor, query }) => ({
    status: 200,
    body: { invitations: await listMyInvitations(db, actor, query) },
  }),

  acceptInvitation: async ({ db, actor, params }) => ({
    status: 200,
    body: { tenant: await acceptInvitation(db, actor, params.invitation_id) },
  }),

  declineInvitation: async ({ db, actor, params }) => {
    await declineInvitation(db, actor, params.invitation_id);
    return { status: 204 };
  },
} satisfies Partial<HandlerMap>;
