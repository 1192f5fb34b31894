import { type Membership, minimumRole, type Permission, requirePermission, roleAtLeast, rolesAllowed } from './access';
import type { ProblemError } from './errors';

// What each role may do, in the words of openapi/api.yaml's introduction: a member reads the tenant, creates works
// and requests and acts on requests; an admin also renames the tenant and manages works, members and webhook
// endpoints; only an owner grants, changes or takes away the owner role.
const everyoneMay: Permission[] = ['readTenant', 'createWork', 'sendRequest', 'actOnRequest'];
const adminsMay: Permission[] = ['renameTenant', 'manageWorks', 'manageMembers', 'manageWebhooks'];
const ownersMay: Permission[] = ['manageOwners'];

const owner: Membership = { tenantId: 't', role: 'owner' };
const admin: Membership = { tenantId: 't', role: 'admin' };
const member: Membership = { tenantId: 't', role: 'member' };

/** The problem `requirePermission` throws for `caller`, or undefined when it lets them through. */
function refusal(caller: Membership, permission: Permission, detail?: string): ProblemError | undefined {
  try {
    requirePermission(caller, permission, detail);
    return undefined;
  } catch (error) {
    return error as ProblemError;
  }
}

describe('roles', () => {
  it('orders owner > admin > member', () => {
    expect(roleAtLeast('owner', 'admin')).toBe(true);
    expect(roleAtLeast('admin', 'admin')).toBe(true);
    expect(roleAtLeast('member', 'admin')).toBe(false);
    expect(roleAtLeast('admin', 'owner')).toBe(false);
  });

  it('puts every permission in one of the lists above', () => {
    expect([...everyoneMay, ...adminsMay, ...ownersMay].sort()).toEqual(Object.keys(minimumRole).sort());
  });

  it.each(everyoneMay)('lets every member %s', (permission) => {
    for (const caller of [owner, admin, member]) expect(refusal(caller, permission)).toBeUndefined();
  });

  it.each(adminsMay)('lets owners and admins %s, and refuses members with a 403 that says who may', (permission) => {
    expect(refusal(owner, permission)).toBeUndefined();
    expect(refusal(admin, permission)).toBeUndefined();
    expect(refusal(member, permission)).toMatchObject({
      code: 'forbidden',
      detail: 'This operation needs the owner or admin role.',
    });
  });

  it.each(ownersMay)('lets only owners %s', (permission) => {
    expect(refusal(owner, permission)).toBeUndefined();
    for (const caller of [admin, member])
      expect(refusal(caller, permission)).toMatchObject({
        code: 'forbidden',
        detail: 'This operation needs the owner role.',
      });
  });

  it("puts the caller's own detail on a refusal", () => {
    expect(refusal(admin, 'manageOwners', 'Only an owner can grant the owner role.')).toMatchObject({
      code: 'forbidden',
      detail: 'Only an owner can grant the owner role.',
    });
  });

  it('gives the roles that may, and only those, for a write to take as its condition', () => {
    expect(rolesAllowed('readTenant').sort()).toEqual(['admin', 'member', 'owner']);
    expect(rolesAllowed('manageWorks').sort()).toEqual(['admin', 'owner']);
    expect(rolesAllowed('manageOwners')).toEqual(['owner']);
  });
});
