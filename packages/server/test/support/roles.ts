import type { components } from '@works-api/client';
import { createTenant, ok } from './fixtures';
import type { TestServer, TestUser } from './server';

type Schemas = components['schemas'];
type Role = Schemas['Role'];

/**
 * Makes `user` a member of the tenant with `role`, as the product does it: `by` invites their email (202), and the
 * user accepts the invitation with their own key. Returns the member as the tenant then reads it.
 */
export async function addMember(
  by: TestUser,
  tenantId: string,
  user: TestUser,
  role: Role,
): Promise<Schemas['Member']> {
  const invitation = await inviteEmail(by, tenantId, user.email, role);
  ok(
    await user.client.POST('/me/invitations/{invitation_id}/accept', {
      params: { path: { invitation_id: invitation.id } },
    }),
  );
  return ok(
    await by.client.GET('/tenants/{tenant_id}/members/{user_id}', {
      params: { path: { tenant_id: tenantId, user_id: user.id } },
    }),
  ).member;
}

/** A new user (through the operator route), added to the tenant with `role`. */
export async function addNewMember(
  server: TestServer,
  by: TestUser,
  tenantId: string,
  role: Role,
  name = 'added',
): Promise<Schemas['Member']> {
  const user = await server.createUser(name);
  return addMember(by, tenantId, user, role);
}

/** Adds an email to the tenant: a pending invitation (202), whether or not an account has it. */
export async function inviteEmail(
  by: TestUser,
  tenantId: string,
  email: string,
  role: Role,
  names: { firstName?: string; lastName?: string } = {},
): Promise<Schemas['Invitation']> {
  const result = await by.client.POST('/tenants/{tenant_id}/members', {
    params: { path: { tenant_id: tenantId } },
    body: { email, role, ...names },
  });
  if (result.response.status !== 202) throw new Error(`inviting ${email}: ${result.response.status}`);
  return ok(result).invitation;
}

export interface RoleFixture {
  tenant: Schemas['Tenant'];
  owner: TestUser;
  admin: TestUser;
  member: TestUser;
  /** A user with a valid key who is not a member of `tenant`. */
  stranger: TestUser;
}

/** One tenant with a user in each role, and a user outside it. */
export async function tenantWithRoles(server: TestServer, name = 'Roles Inc'): Promise<RoleFixture> {
  const [owner, admin, member, stranger] = await Promise.all(
    ['owner', 'admin', 'member', 'stranger'].map((who) => server.createUser(who)),
  );
  const tenant = await createTenant(owner!, name);
  await addMember(owner!, tenant.id, admin!, 'admin');
  await addMember(owner!, tenant.id, member!, 'member');
  return { tenant, owner: owner!, admin: admin!, member: member!, stranger: stranger! };
}

/** Problem details as the tests read them. */
export type Problem = Schemas['Problem'];
