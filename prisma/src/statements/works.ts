import type { Db } from '../handle';
import type { Prisma, WebhookEvent, Work } from '../generated/client';
import { type CappedListWindow, type CappedPage, readCountedPage, readSearchPage } from './capped-lists';
import type { OutcomeStatement } from './idempotency';
import { DEFAULT_PAGE_SIZE } from './pages';
import {
  memberMaySql,
  OUTBOX_COLUMNS,
  OUTBOX_PARAMS,
  type OutboxEventRow,
  outboxParams,
  type OwnerColumns,
  ownerColumns,
} from './parts';
import { type SearchTerms, searchTermsSql } from './search';
import { sendStatement } from './send';
import { userRecord } from './users';

/** What a work is read with: its owner's user record. */
const withOwner = { owner: userRecord } as const;

/** A work as read with its owner, without the search prefixes, which no read returns (see the client's `omit`). */
export type WorkRow = Omit<Prisma.WorkGetPayload<{ include: typeof withOwner }>, 'searchPrefixes'>;

/** Which works a list shows: kept (`false`, the default), discarded (`true`) or both (`all`). */
export type DiscardedFilter = 'false' | 'true' | 'all';

/**
 * A tenant's embedded `works` (its first page of kept works, and how many it keeps: the kept count, not a
 * `count(*)`) as a relation include, so that a tenant, or a whole page of tenants, is read with its works in one
 * statement (relationJoins: a lateral join per relation) rather than two more statements per tenant.
 */
export const firstWorksPage = {
  works: {
    where: { discardedAt: null },
    include: withOwner,
    // By the kept works' partial index, (tenant_id, id): see the `row_counts` migration for what keeps
    // PostgreSQL on it inside the lateral join of a page of tenants.
    orderBy: { id: 'desc' },
    take: DEFAULT_PAGE_SIZE + 1,
  },
  counts: { select: { keptWorks: true } },
} as const;

/** A work as a tenant embeds it: what the contract's Work shows, with its owner's user record. */
export type EmbeddedWork = Pick<
  WorkRow,
  'id' | 'slug' | 'name' | 'description' | 'createdAt' | 'updatedAt' | 'discardedAt' | 'owner'
>;

/** A tenant as read with `firstWorksPage` (Prisma's include), or by `findTenant`'s statement. */
export interface WithFirstWorksPage {
  id: string;
  works: EmbeddedWork[];
  counts: ReadonlyArray<{ keptWorks: number }>;
}

/** `WorkColumns` over `works w JOIN users u` (its owner). */
const WORK_COLUMNS = `w.id, w.slug, w.name, w.description, w.created_at AS "createdAt", w.updated_at AS "updatedAt",
                      w.discarded_at AS "discardedAt", ${ownerColumns('u')}`;

/** What counts a tenant's works of each filter: its counter rows' columns. */
const WORKS_COUNTED: Record<DiscardedFilter, string> = {
  false: 'kept_works',
  true: 'discarded_works',
  all: 'kept_works + discarded_works',
};

/**
 * A page of a tenant's works, newest first, with their owners, the caller's role and the works' count, in one
 * prepared statement (capped-lists.ts, `readCountedPage`): by (tenant_id, id), the kept and the discarded works each
 * a partial index (the filter is in the text, so that the prepared plan still matches the index's predicate); the
 * count from the tenant's counter rows.
 */
export function worksPage(
  db: Db,
  window: CappedListWindow,
  discarded: DiscardedFilter,
): Promise<CappedPage<WorkColumns>> {
  return readCountedPage<WorkColumns>(db, window, {
    columns: WORK_COLUMNS,
    from: 'works w JOIN users u ON u.id = w.owner_id',
    key: 'w.id',
    where: [
      'w.tenant_id = :tenantId::uuid',
      ...(discarded === 'all' ? [] : [`w.discarded_at IS ${discarded === 'true' ? 'NOT NULL' : 'NULL'}`]),
    ].join(' AND '),
    params: {},
    count: `(SELECT COALESCE(SUM(${WORKS_COUNTED[discarded]}), 0) FROM tenant_counts WHERE tenant_id = :tenantId::uuid)`,
    prepared: true,
  });
}

/** A work as a search reads it, with its owner's columns. */
export type WorkColumns = Pick<
  WorkRow,
  'id' | 'slug' | 'name' | 'description' | 'createdAt' | 'updatedAt' | 'discardedAt'
> &
  OwnerColumns;

/**
 * A page of a search of a tenant's works, with the caller's role and the capped count: a walk of the newest works,
 * else the prefix index (tenant_id, search_prefixes) (capped-lists.ts, `readSearchPage`).
 */
export function searchWorksPage(
  db: Db,
  window: CappedListWindow,
  filter: { discarded: DiscardedFilter; search: SearchTerms },
): Promise<CappedPage<WorkColumns>> {
  const where = [
    'w.tenant_id = :tenantId::uuid',
    ...(filter.discarded === 'all' ? [] : [`w.discarded_at IS ${filter.discarded === 'true' ? 'NOT NULL' : 'NULL'}`]),
  ].join(' AND ');
  return readSearchPage<WorkColumns>(db, window, {
    columns: WORK_COLUMNS,
    from: 'works w JOIN users u ON u.id = w.owner_id',
    countFrom: 'works w',
    key: 'w.id',
    where,
    params: {},
    search: { alias: 'w', ...searchTermsSql(filter.search, 'w') },
  });
}

/** A new work's columns, as `insertWork` writes them. */
export interface NewWork {
  workId: string;
  tenantId: string;
  slug: string;
  name: string;
  description: string;
  ownerId: string;
  now: string;
  search: string;
}

/**
 * Inserts a work in one statement: the caller's membership with one of `allowedRoles` is its condition, and the
 * Idempotency-Key's result (`key`) is recorded in it too. Returns its id, or nothing (no access, or the key's
 * guard). Prepared: a write by key, planned once per connection.
 */
export async function insertWork(
  db: Db,
  params: NewWork,
  parts: { allowedRoles: readonly string[]; key: OutcomeStatement },
): Promise<Array<Pick<Work, 'id'>>> {
  const { key } = parts;
  return sendStatement<Pick<Work, 'id'>>(
    db,
    `WITH ${key.lockHeldKey}
         work AS (
           INSERT INTO works (id, tenant_id, slug, name, description, owner_id, created_at, updated_at, search)
           SELECT :workId::uuid, :tenantId::uuid, :slug, :name, :description, :ownerId::uuid,
                  :now::timestamptz, :now::timestamptz, :search
           WHERE ${memberMaySql(parts.allowedRoles, ':tenantId', ':ownerId')} AND ${key.guard}
           RETURNING id)${key.recordResult('work')}
         SELECT id FROM work`,
    { ...params, ...key.params },
    { prepared: true },
  );
}

/** A work of a tenant, with its owner's columns (undefined: none). Prepared: a read by key. */
export async function findWorkOfTenant(db: Db, tenantId: string, workId: string): Promise<WorkColumns | undefined> {
  const [work] = await sendStatement<WorkColumns>(
    db,
    `SELECT ${WORK_COLUMNS} FROM works w JOIN users u ON u.id = w.owner_id
     WHERE w.id = :workId::uuid AND w.tenant_id = :tenantId::uuid`,
    { workId, tenantId },
    { prepared: true },
  );
  return work;
}

/**
 * Writes a kept work's name, description and search text while it is as read (`read`: its name and description,
 * and with `readUpdatedAt` its whole row); whether it did.
 */
export async function updateWorkIfUnchanged(
  db: Db,
  ref: { tenantId: string; workId: string },
  read: { name: string; description: string; updatedAt?: Date | undefined },
  data: { name: string; description: string; search: string; updatedAt: Date },
): Promise<boolean> {
  const { count } = await db.prisma.work.updateMany({
    where: {
      id: ref.workId,
      tenantId: ref.tenantId,
      discardedAt: null,
      name: read.name,
      description: read.description,
      ...(read.updatedAt && { updatedAt: read.updatedAt }),
    },
    data,
  });
  return count > 0;
}

/**
 * Discards (`discardedAt` a time) or restores (null) a work while its row is as read (`readUpdatedAt`) and not yet
 * so, and writes its outbox row in the same statement; whether it did.
 */
export async function updateWorkDiscarded(
  db: Db,
  params: { workId: string; tenantId: string; readUpdatedAt: Date; discardedAt: Date | null; now: Date },
  event: OutboxEventRow,
): Promise<boolean> {
  const rows = await sendStatement<Pick<WebhookEvent, 'id'>>(
    db,
    `WITH changed AS (
         UPDATE works SET discarded_at = :discardedAt::timestamptz, updated_at = :now::timestamptz
         WHERE id = :workId::uuid AND tenant_id = :tenantId::uuid AND updated_at = :readUpdatedAt::timestamptz
           AND discarded_at IS ${params.discardedAt !== null ? 'NULL' : 'NOT NULL'}
         RETURNING id)
       INSERT INTO webhook_events (${OUTBOX_COLUMNS}) SELECT ${OUTBOX_PARAMS} FROM changed RETURNING id`,
    {
      workId: params.workId,
      tenantId: params.tenantId,
      readUpdatedAt: params.readUpdatedAt.toISOString(),
      discardedAt: params.discardedAt?.toISOString() ?? null,
      now: params.now.toISOString(),
      ...outboxParams(event),
    },
  );
  return rows.length > 0;
}
