import type { Db } from '../handle';
import type { Membership, Prisma, Tenant } from '../generated/client';
import type { OutcomeStatement } from './idempotency';
import { DEFAULT_PAGE_SIZE, newestFirst, type PageWindow } from './pages';
import { type Queryable, sendStatement } from './send';
import { type UserRecordRow, userRecord } from './users';
import { type EmbeddedWork, firstWorksPage, type WithFirstWorksPage } from './works';

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

/** A tenant as presented: its columns, its owner, its first members, its first page of works and kept count. */
export interface TenantRecord extends WithFirstWorksPage {
  name: string;
  slug: string;
  createdAt: Date;
  updatedAt: Date;
  owner: UserRecordRow;
  memberships: Array<{ role: Membership['role']; user: UserRecordRow }>;
}

const userJson = (alias: string) =>
  `json_build_object('firstName', ${alias}.first_name, 'lastName', ${alias}.last_name, 'email', ${alias}.email)`;

/**
 * A tenant with its owner, its first EMBEDDED_MEMBERS members and its first page of kept works (each with its
 * owner) and their count, and the caller's role in it (null: not a member; the server then shows nothing of it):
 * one prepared statement, the embeds as JSON, by the same indexes as Prisma's include
 * (memberships by (tenant_id, id), the kept works' partial index (tenant_id, id), the counter rows). Read on every
 * get tenant, where Prisma's include cost more CPU building and mapping it than PostgreSQL spent running it.
 * Undefined: no such tenant.
 */
export async function findTenant(
  db: Db,
  tenantId: string,
  callerId: string,
): Promise<(TenantRecord & { callerRole: Membership['role'] | null }) | undefined> {
  const [row] = await sendStatement<
    Omit<TenantRecord, 'works' | 'counts'> & {
      callerRole: Membership['role'] | null;
      works: JsonWork[];
      keptWorks: string;
    }
  >(
    db,
    `SELECT t.id, t.name, t.slug, t.created_at AS "createdAt", t.updated_at AS "updatedAt", ${userJson('o')} AS owner,
       (SELECT role::text FROM memberships WHERE tenant_id = t.id AND user_id = :callerId::uuid) AS "callerRole",
       (SELECT COALESCE(json_agg(json_build_object('role', m.role, 'user', ${userJson('m')}) ORDER BY m.id), '[]')
        FROM (SELECT m.id, m.role, mu.first_name, mu.last_name, mu.email
              FROM memberships m JOIN users mu ON mu.id = m.user_id
              WHERE m.tenant_id = t.id ORDER BY m.id LIMIT ${EMBEDDED_MEMBERS}) AS m) AS memberships,
       (SELECT COALESCE(json_agg(json_build_object(
                 'id', w.id, 'slug', w.slug, 'name', w.name, 'description', w.description, 'createdAt', w.created_at,
                 'updatedAt', w.updated_at, 'discardedAt', w.discarded_at, 'owner', ${userJson('w')}) ORDER BY w.id DESC), '[]')
        FROM (SELECT w.id, w.slug, w.name, w.description, w.created_at, w.updated_at, w.discarded_at,
                     wu.first_name, wu.last_name, wu.email
              FROM works w JOIN users wu ON wu.id = w.owner_id
              WHERE w.tenant_id = t.id AND w.discarded_at IS NULL ORDER BY w.id DESC LIMIT ${DEFAULT_PAGE_SIZE + 1}) AS w) AS works,
       (SELECT COALESCE(SUM(c.kept_works), 0) FROM tenant_counts c WHERE c.tenant_id = t.id) AS "keptWorks"
     FROM tenants t JOIN users o ON o.id = t.owner_id
     WHERE t.id = :tenantId::uuid`,
    { tenantId, callerId },
    { prepared: true },
  );
  if (!row) return undefined;
  const { keptWorks, works, ...tenant } = row;
  return { ...tenant, works: works.map(workFromJson), counts: [{ keptWorks: Number(keptWorks) }] };
}

/** A work as `findTenant` embeds it in JSON: its times as text. */
type JsonWork = Omit<EmbeddedWork, 'createdAt' | 'updatedAt' | 'discardedAt'> & {
  createdAt: string;
  updatedAt: string;
  discardedAt: string | null;
};

const workFromJson = (work: JsonWork): EmbeddedWork => ({
  ...work,
  createdAt: new Date(work.createdAt),
  updatedAt: new Date(work.updatedAt),
  discardedAt: work.discardedAt === null ? null : new Date(work.discardedAt),
});

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
 * One statement for the tenant, its owner's membership and their counts, and the Idempotency-Key's result (`key`):
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
           INSERT INTO tenant_counts (tenant_id, slot, members) SELECT id, counter_slot(), 1 FROM tenant)${key.recordResult('tenant')}
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
