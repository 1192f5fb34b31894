import type { components } from '@works-api/client';
import { createTenant, ok } from './fixtures';
import type { TestServer, TestUser } from './server';

type Schemas = components['schemas'];
type Role = Schemas['Role'];

export async function addMember(by: TestUser, tenantId: string, email: string, role: Role): Promise<Schemas['Member']> {
  return ok(
    await by.client.POST('/tenants/{tenant_id}/members', {
      params: { path: { tenant_id: tenantId } },
      body: { email, role },
    }),
  ).member;
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
