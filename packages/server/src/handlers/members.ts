import { deleteInvitation, listInvitations } from '../domain/members/invitations';
import { addMember, getMember, listMembers, removeMember, updateMember } from '../domain/members/members';
import type { HandlerMap } from '../http/handler';

/** The operations tagged Members in openapi/api.yaml, in the spec's order. */
export const members = {
  listMembers: async ({ db, actor, params, query }) => ({
    status: 200,
    body: { members: await listMembers(db, actor, params.tenant_id, query) },
  }),

  addMember: async ({ db, actor, params, body, limits }) => {
    const added = await addMember(db, actor, params.tenant_id, body, limits.invitationsPerTenant);
    // An email with no user: a pending invitation (202), which no URL reads on its own.
    if ('invitation' in added) return { status: 202, body: { invitation: added.invitation } };
    const { member } = added;
    return { status: 201, body: { member }, location: `/tenants/${params.tenant_id}/members/${member.user.id}` };
  },

  getMember: async ({ db, actor, params }) => ({
    status: 200,
    body: { member: await getMember(db, actor, params.tenant_id, params.user_id) },
  }),

  updateMember: async ({ db, actor, params, body, ifMatch }) => ({
    status: 200,
    body: { member: await updateMember(db, actor, params.tenant_id, params.user_id, body.role, ifMatch) },
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
} satisfies Partial<HandlerMap>;
