import { minimumRole, roleAtLeast } from './access';

describe('roles', () => {
  it('orders owner > admin > member', () => {
    expect(roleAtLeast('owner', 'admin')).toBe(true);
    expect(roleAtLeast('admin', 'admin')).toBe(true);
    expect(roleAtLeast('member', 'admin')).toBe(false);
    expect(roleAtLeast('admin', 'owner')).toBe(false);
  });

  it('lets members read and act, and keeps management for admins', () => {
    expect(minimumRole).toEqual({
      readTenant: 'member',
      createWork: 'member',
      sendRequest: 'member',
      actOnRequest: 'member',
      renameTenant: 'admin',
      manageWorks: 'admin',
      manageMembers: 'admin',
      manageWebhooks: 'admin',
      manageOwners: 'owner',
    });
  });
});
