import type { Db } from '../../db/client';
import { newId } from '../../db/ids';
import { plainQuery } from '../../db/plain-statement';
import { type Actor, authorize } from '../access';
import { notFound } from '../errors';
import { type Connection, type PageRequest, pageOf, toConnection } from '../paging';
import { checkPrecondition, type Precondition, preconditionFailed } from '../preconditions';
import type { Schemas } from '../schemas';
import { createWithUniqueSlug } from '../unique';
import { normalizeName, presentUserRecord } from '../users/present';
import { firstWorksPage, presentFirstWorksPage } from '../works/works';

/** How many members a tenant embeds; the full list is at GET /tenants/{id}/members. */
export const EMBEDDED_MEMBERS = 100;

const userRecord = { select: { firstName: true, lastName: true, email: true } } as const;
const tenantInclude = {
  owner: userRecord,
  memberships: { include: { user: userRecord }, orderBy: { id: 'asc' }, take: EMBEDDED_MEMBERS },
  ...firstWorksPage,
} as const;

interface TenantRow {
  id: string;
  name: string;
  slug: string;
  createdAt: Date;
  updatedAt: Date;
  owner: { firstName: string; lastName: string; email: string };
  memberships: Array<{ role: Schemas['Role']; user: { firstName: string; lastName: string; email: string } }>;
}

export const presentTenant = (tenant: TenantRow, works: Connection<Schemas['Work']>): Schemas['Tenant'] => ({
  id: tenant.id,
  name: tenant.name,
  slug: tenant.slug,
  owner: presentUserRecord(tenant.owner),
  createdAt: tenant.createdAt.toISOString(),
  updatedAt: tenant.updatedAt.toISOString(),
  members: { nodes: tenant.memberships.map((m) => ({ role: m.role, user: presentUserRecord(m.user) })) },
  works,
});

/** A tenant with its members and first page of works: one statement. */
async function loadTenant(db: Db, tenantId: string): Promise<Schemas['Tenant']> {
  const tenant = await db.tenant.findUnique({ where: { id: tenantId }, include: tenantInclude });
  if (!tenant) throw notFound('tenant');
  return presentTenant(tenant, presentFirstWorksPage(tenant));
}

export async function createTenant(db: Db, actor: Actor, input: { name: string }): Promise<Schemas['Tenant']> {
  const name = normalizeName(input.name);
  const tenant = await createWithUniqueSlug(
    name,
    'tenant',
    async (prefix) =>
      (await db.tenant.findMany({ where: { slug: { startsWith: prefix } }, select: { slug: true } })).map(
        (t) => t.slug,
      ),
    async (slug) => {
      // One statement for the tenant and its owner's membership: a batch transaction of two inserts was four round
      // trips (BEGIN, INSERT, INSERT, COMMIT).
      const id = newId();
      const now = new Date();
      await plainQuery(
        db,
        `WITH tenant AS (
           INSERT INTO tenants (id, name, slug, owner_id, created_at, updated_at)
           VALUES ($1::uuid, $2, $3, $4::uuid, $5::timestamptz, $5::timestamptz)
           RETURNING id)
         INSERT INTO memberships (id, tenant_id, user_id, role, created_at)
         SELECT $6::uuid, id, $4::uuid, 'owner'::member_role, $5::timestamptz FROM tenant`,
        [id, name, slug, actor.userId, now.toISOString(), newId()],
      );
      return { id, name, slug, createdAt: now, updatedAt: now };
    },
  );
  // A new tenant's only member is its owner, the caller (see createWork), and it has no works yet.
  return presentTenant(
    { ...tenant, owner: actor.user, memberships: [{ role: 'owner', user: actor.user }] },
    { totalCount: 0, edges: [], pageInfo: { hasNextPage: false, endCursor: null } },
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
    const { count } = await db.tenant.updateMany({
      where: { id: tenantId, name: current.name, updatedAt: new Date(current.updatedAt) },
      data,
    });
    if (count === 0) throw preconditionFailed();
  } else {
    await db.tenant.update({ where: { id: tenantId }, data });
  }
  return loadTenant(db, tenantId);
}

/** The caller's tenants, newest first: two statements per page (the tenants with their embeds, the count). */
export async function listTenants(db: Db, actor: Actor, request: PageRequest) {
  const page = pageOf(request);
  const mine = { memberships: { some: { userId: actor.userId } } };
  const [rows, totalCount] = await Promise.all([
    db.tenant.findMany({
      where: { ...mine, ...(page.beforeId && { id: { lt: page.beforeId } }) },
      include: tenantInclude,
      orderBy: { id: 'desc' },
      take: page.take,
    }),
    db.tenant.count({ where: mine }),
  ]);
  return toConnection(rows, page, totalCount, (tenant) => presentTenant(tenant, presentFirstWorksPage(tenant)));
}
