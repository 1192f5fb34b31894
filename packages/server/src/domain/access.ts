import type { Db } from '@works-api/prisma';
import type { Membership as MembershipRow } from '@works-api/prisma/client';
import { isId } from '@works-api/prisma';
import { preparedQuery } from '@works-api/prisma';
import { notFound, ProblemError } from './errors';
import type { Schemas } from './schemas';

/**
 * Who may do what inside a tenant. Every tenant-scoped domain function starts with `authorize`: a non-member
 * gets 404 (the tenant does not exist for them), a member whose role is too low gets 403.
 */
export type Role = 'owner' | 'admin' | 'member';

export const minimumRole = {
  readTenant: 'member',
  createWork: 'member',
  sendRequest: 'member',
  actOnRequest: 'member',
  renameTenant: 'admin',
  manageWorks: 'admin',
  manageMembers: 'admin',
  /** Webhook endpoints carry signing secrets and see every event of the tenant. */
  manageWebhooks: 'admin',
  /** Granting, changing or taking away the owner role (on top of manageMembers). */
  manageOwners: 'owner',
} as const satisfies Record<string, Role>;

export type Permission = keyof typeof minimumRole;

const rank: Record<Role, number> = { member: 1, admin: 2, owner: 3 };

export const roleAtLeast = (role: Role, minimum: Role): boolean => rank[role] >= rank[minimum];

/** The caller, as established by their API key or their session (the console's cookie). */
export interface Actor {
  userId: string;
  /** What authenticated the request: an API key, or a person's session (which has the user's whole power). */
  via: 'apiKey' | 'session';
  /** The credential's id: the API key's, or the session's. */
  credentialId: string;
  /** How the caller appears as the owner of what they create (users never change, so this stays true). */
  user: Schemas['UserRecord'];
}

export interface Membership {
  tenantId: string;
  role: Role;
}

export async function authorize(db: Db, actor: Actor, tenantId: string, permission: Permission): Promise<Membership> {
  // An id we never issue names no tenant; it must not reach the uuid column either.
  if (!isId(tenantId)) throw notFound('tenant');
  // Nearly every request runs this too: a plain statement, prepared, like the key lookup (see authenticate).
  const [membership] = await preparedQuery<Pick<MembershipRow, 'role'>>(
    db,
    'SELECT role::text AS role FROM memberships WHERE tenant_id = :tenantId::uuid AND user_id = :userId::uuid',
    { tenantId, userId: actor.userId },
  );
  if (!membership) throw notFound('tenant');
  const caller = { tenantId, role: membership.role };
  requirePermission(caller, permission);
  return caller;
}

/**
 * `authorize` as a condition of a write (SQL over the tenant and user id parameters named): the write then goes
 * through only for a member whose role the permission allows, one round trip instead of two. When it writes
 * nothing, `authorize` says why (404 or 403).
 */
export function memberMaySql(permission: Permission, tenantParam: string, userParam: string): string {
  const roles = (Object.keys(rank) as Role[]).filter((role) => roleAtLeast(role, minimumRole[permission]));
  return `EXISTS (SELECT 1 FROM memberships WHERE tenant_id = ${tenantParam}::uuid AND user_id = ${userParam}::uuid
          AND role IN (${roles.map((role) => `'${role}'`).join(', ')}))`;
}

/**
 * For rules that depend on more than the operation (e.g. on the role being granted): checks a membership that
 * `authorize` has already returned against a further permission, with a 403 when its role is too low.
 */
export function requirePermission(caller: Membership, permission: Permission, detail?: string): void {
  const needed = minimumRole[permission];
  if (!roleAtLeast(caller.role, needed)) {
    throw new ProblemError(
      'forbidden',
      detail ?? `This operation needs the ${needed === 'admin' ? 'owner or admin' : needed} role.`,
    );
  }
}
