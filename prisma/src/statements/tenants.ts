import type { Db } from '../handle';
import type { Prisma, Tenant } from '../generated/client';
import type { OutcomeStatement } from './idempotency';
import { newestFirst, type PageWindow } from './pages';
import { type Queryable, sendStatement } from './send';
import { userRecord } from './users';
import { firstWorksPage } from './works';

/** How many members a tenant embeds; the full list is at GET /tenants/{id}/members. */
export const EMBEDDED_MEMBERS = 100;

/** What a tenant is read with: its owner, its first members (role and user record), its first page of works. */
const tenantInclude = {
  owner: userRecord,
  memberships: { select: { role: true, user: userRecord }, orderBy: { id: 'asc' }, take: EMBEDDED_MEMBERS },
  ...firstWorksPage,
} as const;

/** A tenant as read with its embeds. */
export type TenantRow = Prisma.TenantGetPayload<{ include: typeof tenantInclude }>;

/** A tenant with its members and first page of works: one statement (null: none). */
export function findTenant(db: Db, tenantId: string): Promise<TenantRow | null> {
  return db.prisma.tenant.findUnique({ where: { id: tenantId }, include: tenantInclude });
}

/** A new tenant's columns, as `insertTenant` writes them. */
export interface NewTenant {
  tenantId: string;
  name: string;
  slug: string;
  ownerId: string;
  now: string;
  membershipId: string;
  /** The most tenants a user may own: at it, nothing is inserted. */
  maxOwnedTenants: number;
}

/**
 * One statement for the tenant, its owner's membership and their counts, and the Idempotency-Key's outcome (`key`):
 * a batch transaction of two inserts was four round trips (BEGIN, INSERT, INSERT, COMMIT). Prepared: it writes by
 * key, so one plan a connection serves every call. count_new_tenant counts the owned tenant and the owner's
 * membership only while under the cap, exactly under concurrency (see its migration, counted_by_their_creations);
 * at the cap it returns false and nothing is inserted. Returns the tenant's id, or nothing (the cap, or the key's
 * guard).
 */
export function insertTenant(db: Queryable, params: NewTenant, key: OutcomeStatement) {
  return sendStatement<Pick<Tenant, 'id'>>(
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
    { ...params, ...key.params },
    { prepared: true },
  );
}

/**
 * Renames a tenant; with `read` (its name and update time as read), only while its row is still so. Whether it did.
 */
export async function updateTenantName(
  db: Db,
  tenantId: string,
  data: { name: string; updatedAt: Date },
  read?: { name: string; updatedAt: Date },
): Promise<boolean> {
  if (!read) {
    await db.prisma.tenant.update({ where: { id: tenantId }, data });
    return true;
  }
  const { count } = await db.prisma.tenant.updateMany({ where: { id: tenantId, ...read }, data });
  return count > 0;
}

/**
 * A page of a user's tenants, newest first, read from their memberships by (user_id, tenant_id), each with its
 * tenant: a page touches its own rows, where reading tenants in id order filtered by membership walks every tenant
 * of the service for a user with few. `among` (at most 100 ids) keeps only those tenants.
 */
export async function tenantsPageOf(
  db: Db,
  userId: string,
  among: readonly string[] | null,
  page: PageWindow,
): Promise<TenantRow[]> {
  const { where, ...window } = newestFirst(page, 'tenantId');
  const reach = among === null ? {} : { AND: [{ tenantId: { in: [...among] } }] };
  const memberships = await db.prisma.membership.findMany({
    where: { userId, ...where, ...reach },
    select: { tenant: { include: tenantInclude } },
    ...window,
  });
  return memberships.map((membership) => membership.tenant);
}

/** Of `tenantIds` (at most 100), how many the user is a member of. */
export function countMemberTenantsAmong(db: Db, userId: string, tenantIds: readonly string[]): Promise<number> {
  return db.prisma.membership.count({ where: { userId, tenantId: { in: [...tenantIds] } } });
}
