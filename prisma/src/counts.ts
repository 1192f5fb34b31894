import type { Db } from './handle';
import type { SqlSession } from './migrate';

/**
 * The counts the database keeps for every list's `totalCount`: one primary-key read each, whatever the
 * number of rows counted. They change in the same statement as the rows they count (exact under concurrency: each
 * change adds its delta to a counter row under that row's lock): by the triggers of the `row_counts` migration, or,
 * for the members a tenant's creation or an accepted invitation inserts, by the inserting statement itself (the SQL
 * below).
 * A counter row appears with the first row it counts: a missing one is 0.
 */
export type RequestStatusCount = 'pending' | 'confirmed' | 'validated' | 'cancelled';

const orZero = (n: number | undefined): number => n ?? 0;

/** A user's counts: the sum of their striped counter rows (16 at most). */
async function userCountsOf(db: Db, userId: string) {
  const { _sum: sum } = await db.prisma.userCounts.aggregate({
    where: { userId },
    _sum: { memberships: true, apiKeys: true, ownedTenants: true },
  });
  return {
    memberships: orZero(sum.memberships ?? 0),
    apiKeys: orZero(sum.apiKeys ?? 0),
    ownedTenants: orZero(sum.ownedTenants ?? 0),
  };
}

/** The tenants a user is a member of. */
export async function countTenantsOf(db: Db, userId: string): Promise<number> {
  return (await userCountsOf(db, userId)).memberships;
}

export async function countApiKeysOf(db: Db, userId: string): Promise<number> {
  return (await userCountsOf(db, userId)).apiKeys;
}

/** The tenants a user owns (created): what the per-user cap counts. */
export async function countOwnedTenantsOf(db: Db, userId: string): Promise<number> {
  return (await userCountsOf(db, userId)).ownedTenants;
}

/**
 * SQL that counts the members the statement's CTE `rows` (columns tenant_id, user_id) inserted, in their tenants'
 * and users' counts: two CTEs to put after it. Memberships have no insert trigger (a statement-level one cost a
 * create tenant a third of its time): every statement that inserts memberships counts them with this, except a
 * tenant's creation, whose owner is counted by `count_new_tenant` with the cap.
 */
export const countMembersAddedSql = (rows: string) => `
  members_counted AS (
    INSERT INTO tenant_counts AS c (tenant_id, slot, members)
    SELECT tenant_id, counter_slot(), count(*) FROM ${rows} GROUP BY tenant_id ORDER BY tenant_id
    ON CONFLICT (tenant_id, slot) DO UPDATE SET members = c.members + excluded.members),
  memberships_counted AS (
    INSERT INTO user_counts AS c (user_id, slot, memberships)
    SELECT user_id, counter_slot(), count(*) FROM ${rows} GROUP BY user_id ORDER BY user_id
    ON CONFLICT (user_id, slot) DO UPDATE SET memberships = c.memberships + excluded.memberships)`;

/** A tenant's counts: the sum of its striped counter rows (16 at most). */
async function tenantCountsOf(db: Db, tenantId: string) {
  const { _sum: sum } = await db.prisma.tenantCounts.aggregate({
    where: { tenantId },
    _sum: { keptWorks: true, discardedWorks: true, members: true, webhookEndpoints: true },
  });
  return {
    keptWorks: orZero(sum.keptWorks ?? 0),
    discardedWorks: orZero(sum.discardedWorks ?? 0),
    members: orZero(sum.members ?? 0),
    webhookEndpoints: orZero(sum.webhookEndpoints ?? 0),
  };
}

/** A tenant's works: kept (`false`, the default list), discarded (`true`) or both (`all`). */
export async function countWorksOf(db: Db, tenantId: string, discarded: 'false' | 'true' | 'all'): Promise<number> {
  const counts = await tenantCountsOf(db, tenantId);
  if (discarded === 'false') return counts.keptWorks;
  return discarded === 'true' ? counts.discardedWorks : counts.keptWorks + counts.discardedWorks;
}

export async function countMembersOf(db: Db, tenantId: string): Promise<number> {
  return (await tenantCountsOf(db, tenantId)).members;
}

export async function countWebhookEndpointsOf(db: Db, tenantId: string): Promise<number> {
  return (await tenantCountsOf(db, tenantId)).webhookEndpoints;
}

/** The kept works of a tenant read with its `counts` rows (a relation include): their sum. */
export const keptWorksIn = (counts: ReadonlyArray<{ keptWorks: number }>): number =>
  counts.reduce((sum, row) => sum + row.keptWorks, 0);

/** A work's requests, all of them or those of one status: the sum of its striped counter rows (16 at most). */
export async function countRequestsOf(db: Db, workId: string, status?: RequestStatusCount): Promise<number> {
  const { _sum: sum } = await db.prisma.workCounts.aggregate({
    where: { workId },
    _sum: { pending: true, confirmed: true, validated: true, cancelled: true },
  });
  if (status) return orZero(sum[status] ?? undefined);
  return (
    orZero(sum.pending ?? 0) + orZero(sum.confirmed ?? 0) + orZero(sum.validated ?? 0) + orZero(sum.cancelled ?? 0)
  );
}

export async function countDeliveriesOf(db: Db, endpointId: string): Promise<number> {
  const row = await db.prisma.webhookEndpointCounts.findUnique({ where: { endpointId }, select: { deliveries: true } });
  return orZero(row?.deliveries);
}

/**
 * Rebuilds every count (and raises the slug counters) from the rows themselves; returns how many counter rows
 * were wrong. Writers of the counted tables wait while it runs (readers do not). For `pnpm db:recount` and after a
 * restore; the SQL is `recount_rows()`, defined by the `row_counts` migration.
 */
export async function recountRows(session: SqlSession): Promise<number> {
  const [row] = await session.query<{ fixed: number }>('SELECT recount_rows() AS fixed');
  return Number(row?.fixed ?? 0);
}
