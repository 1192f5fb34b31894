import type { Db, TenantRecord } from '@works-api/prisma';
import {
  countMemberTenantsAmong,
  isId,
  countTenantsOf,
  findTenant,
  insertTenant,
  newId,
  nextTenantSlugNumber,
  tenantsPageOf,
  updateTenantName,
} from '@works-api/prisma';
import { type HeldKey } from '@works-api/prisma';
import { type Actor, authorize, judgeMembership, type Permission } from '../access';
import { notFound } from '../errors';
import { tenantLimitReached } from '../limits';
import { type Page, type PageRequest, readPage } from '../paging';
import { checkPrecondition, type Precondition, preconditionFailed } from '../preconditions';
import type { Schemas } from '../schemas';
import { createWithUniqueSlug } from '../unique';
import { normalizeName, presentUserRecord } from '../users/present';
import { presentFirstWorksPage } from '../works/works';
import { recordedWith } from '../idempotent-results';

export const presentTenant = (tenant: TenantRecord): Schemas['Tenant'] => ({
  id: tenant.id,
  name: tenant.name,
  slug: tenant.slug,
  owner: presentUserRecord(tenant.owner),
  createdAt: tenant.createdAt.toISOString(),
  updatedAt: tenant.updatedAt.toISOString(),
  members: { nodes: tenant.memberships.map((m) => ({ role: m.role, user: presentUserRecord(m.user) })) },
  works: presentFirstWorksPage(tenant),
});

/** A tenant with its members and first page of works: one statement. */
/**
 * The tenant, with the caller's role read in the same statement: judged against `permission` as `authorize` would,
 * or, without one (the caller was authorized before a write), only 404 when the tenant is gone.
 */
async function loadTenant(db: Db, actor: Actor, tenantId: string, permission?: Permission): Promise<Schemas['Tenant']> {
  if (!isId(tenantId)) throw notFound('tenant');
  const tenant = await findTenant(db, tenantId, actor.userId);
  if (permission) judgeMembership(actor, tenantId, tenant?.callerRole, permission);
  if (!tenant) throw notFound('tenant');
  return presentTenant(tenant);
}

/**
 * Creates a tenant owned by the caller; under an Idempotency-Key (`heldKey`), the tenant is the key's result,
 * recorded in the same statement.
 */
export async function createTenant(
  db: Db,
  actor: Actor,
  input: { name: string },
  maxOwnedTenants: number,
  heldKey?: HeldKey,
): Promise<Schemas['Tenant']> {
  const name = normalizeName(input.name);
  return createWithUniqueSlug(
    name,
    'tenant',
    (base) => nextTenantSlugNumber(db, base),
    async (slug) => {
      const id = newId();
      const now = new Date();
      // A new tenant's only member is its owner, the caller (see createWork), and it has no works yet.
      const tenant = presentTenant({
        ...{ id, name, slug, ownerId: actor.userId, createdAt: now, updatedAt: now },
        owner: actor.user,
        memberships: [{ role: 'owner', user: actor.user }],
        works: [],
        counts: [],
      });
      // One statement (see insertTenant): at the cap it inserts nothing.
      const key = recordedWith(db, heldKey, tenant);
      const created = await insertTenant(
        db,
        {
          ...{ tenantId: id, name, slug, ownerId: actor.userId, now: now.toISOString() },
          ...{ membershipId: newId(), maxOwnedTenants },
        },
        key,
      );
      if (created.length === 0) throw tenantLimitReached(maxOwnedTenants);
      return tenant;
    },
  );
}

export function getTenant(db: Db, actor: Actor, tenantId: string) {
  return loadTenant(db, actor, tenantId, 'readTenant');
}

export async function renameTenant(
  db: Db,
  actor: Actor,
  tenantId: string,
  name: string,
  precondition?: Precondition<Schemas['Tenant']>,
) {
  await authorize(db, actor, tenantId, 'renameTenant');
  const data = { name: normalizeName(name), updatedAt: new Date() };
  if (precondition) {
    // Check If-Match against the tenant as it is now, then rename only if its row has not changed since.
    const current = await loadTenant(db, actor, tenantId);
    checkPrecondition(precondition, () => current);
    const read = { name: current.name, updatedAt: new Date(current.updatedAt) };
    if (!(await updateTenantName(db, tenantId, data, read))) throw preconditionFailed();
  } else {
    await updateTenantName(db, tenantId, data);
  }
  return loadTenant(db, actor, tenantId);
}

/**
 * The caller's tenants, newest first: two statements per page (the tenants with their embeds, the kept count).
 * The page is read from the caller's memberships, by (user_id, tenant_id), each with its tenant: a page touches
 * its own rows, where reading tenants in id order filtered by membership walks every tenant of the service for a
 * caller with few.
 */
export async function listTenants(db: Db, actor: Actor, request: PageRequest) {
  return readPage(request, {
    // A key limited to some tenants lists only those (at most 100): the others do not exist for it.
    rows: (page: Page) => tenantsPageOf(db, actor.userId, actor.tenants && [...actor.tenants], page),
    // The kept count of the user's tenants; for a limited key, its tenants the user is still a member of.
    totalCount: () =>
      actor.tenants === null
        ? countTenantsOf(db, actor.userId)
        : countMemberTenantsAmong(db, actor.userId, [...actor.tenants]),
    present: presentTenant,
  });
}
