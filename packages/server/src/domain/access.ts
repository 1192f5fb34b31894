import type { Db } from '@works-api/prisma';
import { findMemberRole, isId } from '@works-api/prisma';
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

/** What an API key may do, per resource: the contract's `Scope` (each operation names one, `x-required-scope`). */
export type Scope = Schemas['Scope'];

/**
 * The caller, as established by their credential: an API key (`via: 'apiKey'`) or a session (`via: 'session'`, the
 * user's full power: `tenants` and `scopes` null). Power is the user's current role in the tenant (read per request,
 * never copied here) AND `tenants` AND `scopes`.
 */
export interface Actor {
  userId: string;
  /** How the caller appears as the owner of what they create (users never change, so this stays true). */
  user: Schemas['UserRecord'];
  via: 'apiKey' | 'session';
  /** The API key's id, or the session's. */
  credentialId: string;
  /** The tenants the credential reaches; null: every tenant of the user, now and later. */
  tenants: ReadonlySet<string> | null;
  /** The scopes the credential holds; null: every scope (the role alone decides). */
  scopes: ReadonlySet<Scope> | null;
}

/** A restricted credential: an API key created with `tenants` or `scopes`. */
export const isRestricted = (actor: Pick<Actor, 'tenants' | 'scopes'>): boolean =>
  actor.tenants !== null || actor.scopes !== null;

/**
 * Whether the credential holds `scope`. `account:manage` (API keys, one's own invitations) only an unrestricted
 * credential holds; `tenants:create` never one limited to tenants (what it made would be out of its reach).
 */
export function holdsScope(actor: Pick<Actor, 'tenants' | 'scopes'>, scope: Scope): boolean {
  if (scope === 'account:manage') return !isRestricted(actor);
  if (scope === 'tenants:create' && actor.tenants !== null) return false;
  return actor.scopes === null || actor.scopes.has(scope);
}

/** Whether the credential reaches the tenant (its user's membership is a separate question). */
export const reachesTenant = (actor: Pick<Actor, 'tenants'>, tenantId: string): boolean =>
  actor.tenants === null || actor.tenants.has(tenantId);

/**
 * The lowest role that uses each scope in some tenant (the `Scope` schema's table): a key may ask for a scope only
 * when its user has at least this role in one of the key's tenants. `null`: no tenant role is needed; `account:manage`
 * is never given to a restricted key at all.
 */
export const scopeMinimumRole = {
  'account:read': null,
  'account:manage': null,
  'tenants:read': 'member',
  'tenants:create': null,
  'tenants:write': 'admin',
  'members:read': 'member',
  'members:write': 'member',
  'works:read': 'member',
  'works:write': 'member',
  'requests:read': 'member',
  'requests:write': 'member',
  'requests:act': 'member',
  'webhooks:read': 'admin',
  'webhooks:write': 'admin',
  'events:read': 'member',
} as const satisfies Record<Scope, Role | null>;

export const SCOPES = Object.keys(scopeMinimumRole) as Scope[];

export interface Membership {
  tenantId: string;
  role: Role;
}

export async function authorize(db: Db, actor: Actor, tenantId: string, permission: Permission): Promise<Membership> {
  // An id we never issue names no tenant; it must not reach the uuid column either. A tenant out of the key's reach
  // is one the caller is not a member of.
  if (!isId(tenantId) || !reachesTenant(actor, tenantId)) throw notFound('tenant');
  return judgeMembership(actor, tenantId, (await findMemberRole(db, tenantId, actor.userId))?.role, permission);
}

/**
 * `authorize` for a statement that read the caller's role itself, with what it reads (undefined or null: not a
 * member): 404 for a non-member or a tenant out of the key's reach, 403 for a role too low.
 */
export function judgeMembership(
  actor: Actor,
  tenantId: string,
  role: Role | null | undefined,
  permission: Permission,
): Membership {
  if (!role || !reachesTenant(actor, tenantId)) throw notFound('tenant');
  const caller = { tenantId, role };
  requirePermission(caller, permission);
  return caller;
}

/**
 * The roles `permission` allows: what a write that checks the caller's membership itself takes as its condition
 * (one round trip instead of two); when it writes nothing, `authorize` says why (404 or 403).
 */
export const rolesAllowed = (permission: Permission): Role[] =>
  (Object.keys(rank) as Role[]).filter((role) => roleAtLeast(role, minimumRole[permission]));

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
