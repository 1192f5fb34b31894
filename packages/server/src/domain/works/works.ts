import type { Db, DiscardedFilter, EmbeddedWork, WithFirstWorksPage, WorkColumns } from '@works-api/prisma';
import {
  findWorkOfTenant,
  insertWork,
  keptWorksIn,
  nextWorkSlugNumber,
  searchWorksPage,
  updateWorkDiscarded,
  updateWorkIfUnchanged,
  worksPage,
} from '@works-api/prisma';
import { type HeldKey, KeyHoldLost } from '@works-api/prisma';
import { isId, newId } from '@works-api/prisma';
import { type Actor, authorize, rolesAllowed } from '../access';
import { notFound, ProblemError } from '../errors';
import { type PageRequest, pageOf, pagesOn, toConnection } from '../paging';
import { checkPrecondition, type Precondition, preconditionFailed } from '../preconditions';
import type { Schemas } from '../schemas';
import { createWithUniqueSlug } from '../unique';
import { normalizeName, ownerRecord, presentUserRecord } from '../users/present';
import { searchTerms, workSearchText } from '../search/fold';
import { readCappedList, readCountedList } from '../capped-list';
import { outboxRow } from '../../webhooks/events';
import { recordedWith } from '../idempotent-results';

export const presentWork = (work: EmbeddedWork): Schemas['Work'] => ({
  id: work.id,
  slug: work.slug,
  name: work.name,
  description: work.description,
  createdAt: work.createdAt.toISOString(),
  updatedAt: work.updatedAt.toISOString(),
  discardedAt: work.discardedAt?.toISOString() ?? null,
  owner: presentUserRecord(work.owner),
});

/** A work read as `WorkColumns` (its owner's columns beside its own). */
const presentWorkColumns = (row: WorkColumns) => presentWork({ ...row, owner: ownerRecord(row) });

/** A tenant's first page of kept works: the first page of `listWorks` for that tenant, where its cursors go on. */
export const presentFirstWorksPage = (tenant: WithFirstWorksPage) =>
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
  // One statement with the caller's membership and the count the database keeps.
  return readCountedList(actor, request, {
    tenantId,
    permission: 'readTenant',
    read: (window) => worksPage(db, window, discarded),
    present: presentWorkColumns,
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
  const search = searchTerms(q);
  return readCappedList(actor, request, {
    tenantId,
    permission: 'readTenant',
    read: (window) => searchWorksPage(db, window, { discarded, search }),
    present: presentWorkColumns,
  });
}

/**
 * Creates a work in one statement: the caller's membership is its condition (see `insertWork`) and, under an
 * Idempotency-Key (`heldKey`), the work is the key's result, recorded in it too.
 */
export async function createWork(
  db: Db,
  actor: Actor,
  tenantId: string,
  input: { name: string; description?: string },
  heldKey?: HeldKey,
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
      const key = recordedWith(db, heldKey, presented);
      // Prepared: a write by key, planned once per connection.
      const created = await insertWork(
        db,
        { workId: work.id, tenantId, slug, name, description, ownerId: actor.userId, now: now.toISOString(), search },
        { allowedRoles: rolesAllowed('createWork'), key },
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
  const work = await findWorkOfTenant(db, tenantId, workId);
  if (!work) throw notFound('work');
  return { ...work, owner: ownerRecord(work) };
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
    const updated = await updateWorkIfUnchanged(
      db,
      { tenantId, workId },
      { name: current.name, description: current.description, updatedAt: precondition && current.updatedAt },
      { name, description, search: workSearchText({ name, slug: current.slug, description }), updatedAt: new Date() },
    );
    if (updated) return presentWork(await findWork(db, tenantId, workId));
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
    const done = await updateWorkDiscarded(
      db,
      { workId, tenantId, readUpdatedAt: current.updatedAt, discardedAt: discarded ? now : null, now },
      event,
    );
    if (done) {
      db.outbox.webhooks.signal();
      return changed;
    }
    // Someone changed the work in between: look again.
  }
  throw new Error(`work ${workId}: discard kept losing races`);
}
