import type { components } from '@works-api/client';
import { createTenant, ok } from './fixtures';
import type { TestServer, TestUser } from './server';

type Schemas = components['schemas'];
type Role = Schemas['Role'];

/** Adds the existing user with this email (201). An email with no user is invited instead: use `inviteEmail`. */
export async function addMember(by: TestUser, tenantId: string, email: string, role: Role): Promise<Schemas['Member']> {
  const added = ok(
    await by.client.POST('/tenants/{tenant_id}/members', {
      params: { path: { tenant_id: tenantId } },
      body: { email, role },
    }),
  );
  if (!('member' in added)) throw new Error(`${email} has no user: it was invited, not added`);
  return added.member;
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
  return addMember(by, tenantId, user.email, role);
}

/** Adds an email that no user has: a pending invitation (202). */
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
  const added = ok(result);
  if (!('invitation' in added)) throw new Error(`${email} has a user: it was added, not invited`);
  return added.invitation;
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
  await addMember(owner!, tenant.id, admin!.email, 'admin');
  await addMember(owner!, tenant.id, member!.email, 'member');
  return { tenant, owner: owner!, admin: admin!, member: member!, stranger: stranger! };
}

/** Problem details as the tests read them. */
export type Problem = Schemas['Problem'];
