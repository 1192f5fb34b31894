import type { Db } from '@works-api/prisma';
import { countTenantsOf } from '@works-api/prisma';
import { nextTenantSlugNumber } from '@works-api/prisma';
import { newId } from '@works-api/prisma';
import { type KeyOutcome, outcomeStatement } from '@works-api/prisma';
import type { Prisma, Tenant } from '@works-api/prisma/client';
import { sendStatement } from '@works-api/prisma';
import { type Actor, authorize } from '../access';
import { notFound } from '../errors';
import { tenantLimitReached } from '../limits';
import { newestFirst, type Page, type PageRequest, readPage } from '../paging';
import { checkPrecondition, type Precondition, preconditionFailed } from '../preconditions';
import type { Schemas } from '../schemas';
import { createWithUniqueSlug } from '../unique';
import { normalizeName, presentUserRecord, userRecord } from '../users/present';
import { firstWorksPage, presentFirstWorksPage } from '../works/works';

/** How many members a tenant embeds; the full list is at GET /tenants/{id}/members. */
export const EMBEDDED_MEMBERS = 100;

const tenantInclude = {
  owner: userRecord,
  // What a tenant embeds of a member: their role and user record.
  memberships: { select: { role: true, user: userRecord }, orderBy: { id: 'asc' }, take: EMBEDDED_MEMBERS },
  ...firstWorksPage,
} as const;

/** A tenant as read with its embeds; also what a tenant created here is presented from. */
type TenantRow = Prisma.TenantGetPayload<{ include: typeof tenantInclude }>;

export const presentTenant = (tenant: TenantRow): Schemas['Tenant'] => ({
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
async function loadTenant(db: Db, tenantId: string): Promise<Schemas['Tenant']> {
  const tenant = await db.prisma.tenant.findUnique({ where: { id: tenantId }, include: tenantInclude });
  if (!tenant) throw notFound('tenant');
  return presentTenant(tenant);
}

/**
 * Creates a tenant owned by the caller; with `outcome` (an Idempotency-Key), the key's outcome is written in the
 * same statement.
 */
export async function createTenant(
  db: Db,
  actor: Actor,
  input: { name: string },
  maxOwnedTenants: number,
  outcome?: KeyOutcome<Schemas['Tenant']>,
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
      // One statement for the tenant, its owner's membership and their counts: a batch transaction of two inserts
      // was four round trips (BEGIN, INSERT, INSERT, COMMIT). Prepared: it writes by key, so one plan a connection
      // serves every call. count_new_tenant counts the owned tenant and the owner's membership only while under the
      // cap, exactly under concurrency (see its migration, counted_by_their_creations); at the cap it returns false
      // and nothing is inserted.
      const key = outcomeStatement(outcome, tenant);
      const created = await sendStatement<Pick<Tenant, 'id'>>(
        db,
        `WITH ${key.lockHeldKey}
         placed AS (SELECT count_new_tenant(:ownerId::uuid, :maxOwnedTenants::int) AS placed WHERE ${key.guard}),
         tenant AS (
           INSERT INTO tenants (id, name, slug, owner_id, created_at, updated_at)
           SELECT :tenantId::uuid, :name, :slug, :ownerId::uuid, :now::timestamptz, :now::timestamptz FROM placed
           WHERE placed
           RETURNING id),
         members_counted AS (
           INSERT INTO tenant_counts (tenant_id, slot, members) SELECT id, counter_slot(), 1 FROM tenant)${key.recordOutcome('tenant')}
         INSERT INTO memberships (id, tenant_id, user_id, role, created_at)
         SELECT :membershipId::uuid, id, :ownerId::uuid, 'owner'::member_role, :now::timestamptz FROM tenant
         RETURNING tenant_id AS id`,
        {
          ...{ tenantId: id, name, slug, ownerId: actor.userId, now: now.toISOString() },
          ...{ membershipId: newId(), maxOwnedTenants, ...key.params },
        },
        { prepared: true },
      );
      if (created.length === 0) throw tenantLimitReached(maxOwnedTenants);
      return tenant;
    },
  );
}

export async function getTenant(db: Db, actor: Actor, tenantId: string) {
  await authorize(db, actor, tenantId, 'readTenant');
  return loadTenant(db, tenantId);
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
    const current = await loadTenant(db, tenantId);
    checkPrecondition(precondition, () => current);
    const { count } = await db.prisma.tenant.updateMany({
      where: { id: tenantId, name: current.name, updatedAt: new Date(current.updatedAt) },
      data,
    });
    if (count === 0) throw preconditionFailed();
  } else {
    await db.prisma.tenant.update({ where: { id: tenantId }, data });
  }
  return loadTenant(db, tenantId);
}

/**
 * The caller's tenants, newest first: two statements per page (the tenants with their embeds, the kept count).
 * The page is read from the caller's memberships, by (user_id, tenant_id), each with its tenant: a page touches
 * its own rows, where reading tenants in id order filtered by membership walks every tenant of the service for a
 * caller with few.
 */
export async function listTenants(db: Db, actor: Actor, request: PageRequest) {
  return readPage(request, {
    rows: async (page: Page) => {
      const { where, ...window } = newestFirst(page, 'tenantId');
      // A key limited to some tenants lists only those (at most 100): the others do not exist for it.
      const reach = actor.tenants === null ? {} : { AND: [{ tenantId: { in: [...actor.tenants] } }] };
      const memberships = await db.prisma.membership.findMany({
        where: { userId: actor.userId, ...where, ...reach },
        select: { tenant: { include: tenantInclude } },
        ...window,
      });
      return memberships.map((membership) => membership.tenant);
    },
    // The kept count of the user's tenants; for a limited key, its tenants the user is still a member of.
    totalCount: () =>
      actor.tenants === null
        ? countTenantsOf(db, actor.userId)
        : db.prisma.membership.count({ where: { userId: actor.userId, tenantId: { in: [...actor.tenants] } } }),
    present: presentTenant,
  });
}
