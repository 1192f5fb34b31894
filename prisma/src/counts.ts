import type { Db } from './handle';
import type { SqlSession } from './migrate';
import { sendStatement } from './statements/send';

/**
 * The counts the database keeps for every list's `totalCount`: one primary-key read each, whatever the
 * number of rows counted. They change in the same statement as the rows they count (exact under concurrency: each
 * change adds its delta to a counter row under that row's lock): by the triggers of the `row_counts` migration, or,
 * for the members a tenant's creation or an accepted invitation inserts, by the inserting statement itself (the SQL
 * below).
 * A counter row appears with the first row it counts: a missing one is 0.
 */

/**
 * The sums of some counter columns over an owner's striped rows (16 at most): one prepared statement, planned once
 * per connection (a read by key), 0 for a column with no rows. Sums are bigint, which the driver returns as text.
 */
async function sumCounters<Column extends string>(
  db: Db,
  table: 'user_counts' | 'tenant_counts',
  owner: 'user_id' | 'tenant_id',
  ownerId: string,
  columns: Readonly<Record<Column, string>>,
): Promise<Record<Column, number>> {
  const sums = Object.entries<string>(columns).map(([name, column]) => `COALESCE(SUM(${column}), 0) AS "${name}"`);
  const [row] = await sendStatement<Record<Column, string | number>>(
    db,
    `SELECT ${sums.join(', ')} FROM ${table} WHERE ${owner} = :ownerId::uuid`,
    { ownerId },
    { prepared: true },
  );
  return Object.fromEntries(Object.keys(columns).map((name) => [name, Number(row?.[name as Column] ?? 0)])) as Record<
    Column,
    number
  >;
}

/** A user's counts: the sum of their striped counter rows. */
const userCountsOf = (db: Db, userId: string) =>
  sumCounters(db, 'user_counts', 'user_id', userId, {
    memberships: 'memberships',
    apiKeys: 'api_keys',
    ownedTenants: 'owned_tenants',
  });

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

/** A tenant's counts: the sum of its striped counter rows. */
const tenantCountsOf = (db: Db, tenantId: string) =>
  sumCounters(db, 'tenant_counts', 'tenant_id', tenantId, {
    members: 'members',
    webhookEndpoints: 'webhook_endpoints',
  });

export async function countMembersOf(db: Db, tenantId: string): Promise<number> {
  return (await tenantCountsOf(db, tenantId)).members;
}

export async function countWebhookEndpointsOf(db: Db, tenantId: string): Promise<number> {
  return (await tenantCountsOf(db, tenantId)).webhookEndpoints;
}

/** The kept works of a tenant read with its `counts` rows (a relation include): their sum. */
export const keptWorksIn = (counts: ReadonlyArray<{ keptWorks: number }>): number =>
  counts.reduce((sum, row) => sum + row.keptWorks, 0);

export async function countDeliveriesOf(db: Db, endpointId: string): Promise<number> {
  const [row] = await sendStatement<{ deliveries: number }>(
    db,
    'SELECT deliveries FROM webhook_endpoint_counts WHERE endpoint_id = :endpointId::uuid',
    { endpointId },
    { prepared: true },
  );
  return row?.deliveries ?? 0;
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
