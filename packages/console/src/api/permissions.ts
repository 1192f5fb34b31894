import { allowedActionsByStatus } from '@works-api/client';
import type { RequestAction, RequestStatus, Role, Tenant, User } from './types';

/**
 * What each role may do, as the contract describes it (openapi/api.yaml, "Authentication"): the console hides or
 * disables what the caller's role may not use. The server decides; a 403 it sends anyway is shown as it is.
 */
const rank = { member: 1, admin: 2, owner: 3 } as const satisfies Record<Role, number>;

export const atLeast = (role: Role | undefined, minimum: Role): boolean =>
  role !== undefined && rank[role] >= rank[minimum];

export interface Abilities {
  role: Role | undefined;
  renameTenant: boolean;
  manageWorks: boolean;
  manageMembers: boolean;
  /** Grant, change or remove the owner role. */
  manageOwners: boolean;
}

export function abilitiesIn(tenant: Tenant, me: User): Abilities {
  const role = tenant.members.nodes.find((member) => member.user.email === me.email)?.role;
  return {
    role,
    renameTenant: atLeast(role, 'admin'),
    manageWorks: atLeast(role, 'admin'),
    manageMembers: atLeast(role, 'admin'),
    manageOwners: atLeast(role, 'owner'),
  };
}

/** The roles the caller may grant: an owner grants any, an admin `admin` and `member`. */
export const grantableRoles = (abilities: Abilities): Role[] =>
  abilities.manageOwners ? ['owner', 'admin', 'member'] : abilities.manageMembers ? ['admin', 'member'] : [];

/** Whether a request in `status` takes `action`: the contract's lifecycle table, as the typed client exports it. */
export const canDo = (status: RequestStatus, action: RequestAction): boolean =>
  (allowedActionsByStatus[status] as readonly RequestAction[]).includes(action);
