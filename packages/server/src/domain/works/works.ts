import type { Db } from '@works-api/prisma';
import { countWorksOf, keptWorksIn } from '@works-api/prisma';
import { nextWorkSlugNumber } from '@works-api/prisma';
import type { Prisma, WebhookEvent, Work } from '@works-api/prisma/client';
import { type KeyOutcome, KeyHoldLost, outcomeStatement } from '@works-api/prisma';
import { isId, newId } from '@works-api/prisma';
import { sendStatement } from '@works-api/prisma';
import { type Actor, authorize, memberMaySql } from '../access';
import { notFound, ProblemError } from '../errors';
import {
  DEFAULT_PAGE_SIZE,
  newestFirst,
  type Page,
  type PageRequest,
  pageOf,
  pagesOn,
  readPage,
  toConnection,
} from '../paging';
import { checkPrecondition, type Precondition, preconditionFailed } from '../preconditions';
import type { Schemas } from '../schemas';
import { createWithUniqueSlug } from '../unique';
import {
  normalizeName,
  type OwnerColumns,
  ownerColumns,
  ownerRecord,
  presentUserRecord,
  userRecord,
} from '../users/present';
import { searchSql, workSearchText } from '../search/fold';
import { readCappedList } from '../capped-list';
import { OUTBOX_COLUMNS, OUTBOX_PARAMS, outboxParams, outboxRow } from '../../webhooks/events';

const withOwner = { owner: userRecord } as const;

/** A work as read with its owner; also what a work written in this module is presented from. */
// Without the search prefixes, which no read returns (see the client's `omit`).
type WorkRow = Omit<Prisma.WorkGetPayload<{ include: typeof withOwner }>, 'searchPrefixes'>;

export const presentWork = (work: PresentedWorkRow): Schemas['Work'] => ({
  id: work.id,
  slug: work.slug,
  name: work.name,
  description: work.description,
  createdAt: work.createdAt.toISOString(),
  updatedAt: work.updatedAt.toISOString(),
  discardedAt: work.discardedAt?.toISOString() ?? null,
  owner: presentUserRecord(work.owner),
});

export type DiscardedFilter = 'false' | 'true' | 'all';

const discardedWhere = (filter: DiscardedFilter) =>
  filter === 'all' ? {} : { discardedAt: filter === 'true' ? { not: null } : null };

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

/** A tenant's first page of kept works: the first page of `listWorks` for that tenant, where its cursors go on. */
export const presentFirstWorksPage = (
  tenant: Pick<Prisma.TenantGetPayload<{ include: typeof firstWorksPage }>, keyof typeof firstWorksPage | 'id'>,
) =>
  pagesOn(toConnection(tenant.works, pageOf({}), keptWorksIn(tenant.counts), presentWork), {
    operationId: 'listWorks',
    path: { tenant_id: tenant.id },
  });

export async function listWorks(
  db: Db,
  actor: Actor,
  tenantId: string,
  request: PageRequest & { discarded?: DiscardedFilter; q?: string },
) {
  const discarded = request.discarded ?? 'false';
  // A search reads the prefix index (tenant_id, search_prefixes) or walks (tenant_id, id), whichever PostgreSQL
  // finds cheaper (it knows how common each word is: statistics on the array's elements); its count is capped, and
  // read newest first like the page, so that it is the page's plan. One statement with the caller's membership.
  if (request.q !== undefined) return searchWorks(db, actor, tenantId, request.q, discarded, request);
  await authorize(db, actor, tenantId, 'readTenant');
  const filter = { tenantId, ...discardedWhere(discarded) };
  return readPage(request, {
    // By (tenant_id, id); the kept and the discarded works each have a partial index in that order.
    rows: (page: Page) => {
      const { where, ...window } = newestFirst(page, 'id');
      return db.prisma.work.findMany({ where: { ...filter, ...where }, include: withOwner, ...window });
    },
    totalCount: () => countWorksOf(db, tenantId, discarded),
    present: presentWork,
  });
}

function searchWorks(
  db: Db,
  actor: Actor,
  tenantId: string,
  q: string,
  discarded: DiscardedFilter,
  request: PageRequest,
) {
  const search = searchSql(q, 'w');
  const where = [
    'w.tenant_id = :tenantId::uuid',
    ...(discarded === 'all' ? [] : [`w.discarded_at IS ${discarded === 'true' ? 'NOT NULL' : 'NULL'}`]),
    search.where,
  ].join(' AND ');
  return readCappedList(db, actor, request, {
    tenantId,
    permission: 'readTenant',
    columns: `w.id, w.slug, w.name, w.description, w.created_at AS "createdAt", w.updated_at AS "updatedAt",
              w.discarded_at AS "discardedAt", ${ownerColumns('u')}`,
    from: 'works w JOIN users u ON u.id = w.owner_id',
    countFrom: 'works w',
    key: 'w.id',
    where,
    params: search.params,
    countOrder: 'w.id DESC',
    present: (row: WorkColumns) => presentWork({ ...row, owner: ownerRecord(row) }),
  });
}

/** What `presentWork` reads of a work. */
type PresentedWorkRow = Pick<
  WorkRow,
  'id' | 'slug' | 'name' | 'description' | 'createdAt' | 'updatedAt' | 'discardedAt' | 'owner'
>;

type WorkColumns = Omit<PresentedWorkRow, 'owner'> & OwnerColumns;

/**
 * Creates a work in one statement: the caller's membership is its condition (see `memberMaySql`) and, with
 * `outcome` (an Idempotency-Key), the key's outcome is written in it too.
 */
export async function createWork(
  db: Db,
  actor: Actor,
  tenantId: string,
  input: { name: string; description?: string },
  outcome?: KeyOutcome<Schemas['Work']>,
): Promise<Schemas['Work']> {
  if (!isId(tenantId)) throw notFound('tenant');
  const name = normalizeName(input.name);
  return createWithUniqueSlug(
    name,
    'work',
    (base) => nextWorkSlugNumber(db, tenantId, base),
    async (slug) => {
      const now = new Date();
      const description = input.description ?? '';
      // The owner is the caller, whom authentication already read.
      const search = workSearchText({ name, slug, description });
      const work = { id: newId(), tenantId, slug, name, description, search, ownerId: actor.userId, owner: actor.user };
      const presented = presentWork({ ...work, createdAt: now, updatedAt: now, discardedAt: null });
      const key = outcomeStatement(outcome, presented);
      // Prepared: a write by key, planned once per connection.
      const created = await sendStatement<Pick<Work, 'id'>>(
        db,
        `WITH ${key.lockHeldKey}
         work AS (
           INSERT INTO works (id, tenant_id, slug, name, description, owner_id, created_at, updated_at, search)
           SELECT :workId::uuid, :tenantId::uuid, :slug, :name, :description, :ownerId::uuid,
                  :now::timestamptz, :now::timestamptz, :search
           WHERE ${memberMaySql('createWork', ':tenantId', ':ownerId')} AND ${key.guard}
           RETURNING id)${key.recordOutcome('work')}
         SELECT id FROM work`,
        {
          workId: work.id,
          tenantId,
          slug,
          name,
          description,
          ownerId: actor.userId,
          now: now.toISOString(),
          search,
          ...key.params,
        },
        { prepared: true },
      );
      if (created.length === 0) {
        await authorize(db, actor, tenantId, 'createWork');
        throw new KeyHoldLost(); // a member, so only the key's guard can have stopped it
      }
      return presented;
    },
  );
}

/** A work of a tenant the actor may see, or 404. */
export async function findWork(db: Db, tenantId: string, workId: string) {
  if (!isId(workId)) throw notFound('work');
  const work = await db.prisma.work.findFirst({ where: { id: workId, tenantId }, include: withOwner });
  if (!work) throw notFound('work');
  return work;
}

export async function getWork(db: Db, actor: Actor, tenantId: string, workId: string) {
  await authorize(db, actor, tenantId, 'readTenant');
  return presentWork(await findWork(db, tenantId, workId));
}

export const workDiscarded = (): ProblemError =>
  new ProblemError('work_discarded', 'This work is discarded: restore it (the undiscard operation) first.');

// An update loses a race only to another write of the same work; this bounds the retries.
const MAX_UPDATE_ATTEMPTS = 4;

/**
 * Renames a work or changes its description. The search text is folded from the name, slug and description
 * together, so the update reads the row, writes all three folded, and applies only while the name and description
 * are still those it read (with `If-Match`, while the whole row is): a concurrent update makes it read again.
 */
export async function updateWork(
  db: Db,
  actor: Actor,
  {
    tenantId,
    workId,
    changes,
    precondition,
  }: {
    tenantId: string;
    workId: string;
    changes: { name?: string; description?: string };
    precondition?: Precondition<Schemas['Work']> | undefined;
  },
) {
  await authorize(db, actor, tenantId, 'manageWorks');
  if (!isId(workId)) throw notFound('work');
  for (let attempt = 1; attempt <= MAX_UPDATE_ATTEMPTS; attempt++) {
    const current = await findWork(db, tenantId, workId);
    checkPrecondition(precondition, () => presentWork(current));
    if (current.discardedAt) throw workDiscarded();
    const name = changes.name !== undefined ? normalizeName(changes.name) : current.name;
    const description = changes.description ?? current.description;
    const { count } = await db.prisma.work.updateMany({
      where: {
        id: workId,
        tenantId,
        discardedAt: null,
        name: current.name,
        description: current.description,
        ...(precondition && { updatedAt: current.updatedAt }),
      },
      data: {
        name,
        description,
        search: workSearchText({ name, slug: current.slug, description }),
        updatedAt: new Date(),
      },
    });
    if (count > 0) return presentWork(await findWork(db, tenantId, workId));
    // Changed or discarded in between: with If-Match that is a failed precondition, else look again.
    if (precondition) {
      const now = await findWork(db, tenantId, workId);
      throw now.discardedAt ? workDiscarded() : preconditionFailed();
    }
  }
  throw new Error(`work ${workId}: update kept losing races`);
}

// A discard loses a race only to another write of the same work; this bounds the retries.
const MAX_DISCARD_ATTEMPTS = 4;

/**
 * Discards (or restores) a work; doing it twice leaves the first timestamp alone (and sends no second event). The
 * change is conditional on the row just read, and writes its `work.discarded` / `work.undiscarded` outbox row in
 * the same statement, so the event carries exactly the work it changed.
 */
export const discardWork = (db: Db, actor: Actor, tenantId: string, workId: string) =>
  setWorkDiscarded(db, actor, tenantId, workId, true);

export const undiscardWork = (db: Db, actor: Actor, tenantId: string, workId: string) =>
  setWorkDiscarded(db, actor, tenantId, workId, false);

async function setWorkDiscarded(db: Db, actor: Actor, tenantId: string, workId: string, discarded: boolean) {
  await authorize(db, actor, tenantId, 'manageWorks');
  for (let attempt = 1; attempt <= MAX_DISCARD_ATTEMPTS; attempt++) {
    const current = await findWork(db, tenantId, workId);
    if ((current.discardedAt !== null) === discarded) return presentWork(current);
    const now = new Date();
    const changed = presentWork({ ...current, discardedAt: discarded ? now : null, updatedAt: now });
    const event = outboxRow(discarded ? 'work.discarded' : 'work.undiscarded', tenantId, { work: changed }, now);
    const rows = await sendStatement<Pick<WebhookEvent, 'id'>>(
      db,
      `WITH changed AS (
         UPDATE works SET discarded_at = :discardedAt::timestamptz, updated_at = :now::timestamptz
         WHERE id = :workId::uuid AND tenant_id = :tenantId::uuid AND updated_at = :readUpdatedAt::timestamptz
           AND discarded_at IS ${discarded ? 'NULL' : 'NOT NULL'}
         RETURNING id)
       INSERT INTO webhook_events (${OUTBOX_COLUMNS}) SELECT ${OUTBOX_PARAMS} FROM changed RETURNING id`,
      {
        workId,
        tenantId,
        readUpdatedAt: current.updatedAt.toISOString(),
        discardedAt: discarded ? now.toISOString() : null,
        now: now.toISOString(),
        ...outboxParams(event),
      },
    );
    if (rows.length > 0) {
      db.outbox.webhooks.signal();
      return changed;
    }
    // Someone changed the work in between: look again.
  }
  throw new Error(`work ${workId}: discard kept losing races`);
}
