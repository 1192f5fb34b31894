import type { Db, RefoldTable } from '@works-api/prisma';
import {
  findRefoldProgress,
  requestsToRefold,
  saveRefoldProgress,
  updateSearchTexts,
  worksToRefold,
} from '@works-api/prisma';
import { requestSearchText, workSearchText } from './fold';

/** Rows read per statement: each batch is one read and at most one update. */
const REFOLD_BATCH = 500;

const TABLES: readonly RefoldTable[] = ['works', 'requests'];

/** The next rows of `table` after `afterId` (by id), with their stored search text and the application's fold. */
async function foldedRows(
  db: Db,
  table: RefoldTable,
  afterId: string | null,
): Promise<Array<{ id: string; search: string; folded: string }>> {
  if (table === 'works') {
    const rows = await worksToRefold(db, afterId, REFOLD_BATCH);
    return rows.map((row) => ({ id: row.id, search: row.search, folded: workSearchText(row) }));
  }
  const rows = await requestsToRefold(db, afterId, REFOLD_BATCH);
  return rows.map((row) => ({ id: row.id, search: row.search, folded: requestSearchText(row) }));
}

/**
 * One batch of the one-off re-fold (migration 20261127021000_search_refold) of `table`: the next rows by id, their
 * search text folded as the application folds it, written where it differs, and where the row still holds the text
 * just read (a rename in between wrote its own fold). Returns how many rows it changed, or undefined when the table
 * is done.
 */
export async function refoldBatch(db: Db, table: RefoldTable): Promise<number | undefined> {
  // No row yet: not started.
  const state = await findRefoldProgress(db, table);
  if (state?.doneAt) return undefined;
  const afterId = state?.afterId ?? null;
  const read = await foldedRows(db, table, afterId);
  const stale = read.filter((row) => row.folded !== row.search);
  const changed = stale.length === 0 ? 0 : await updateSearchTexts(db, table, stale);
  const progress = { afterId: read.at(-1)?.id ?? afterId, doneAt: read.length < REFOLD_BATCH ? new Date() : null };
  await saveRefoldProgress(db, table, progress);
  return changed;
}

/** Re-folds every table to the end; returns the rows it changed. */
export async function refoldSearchTexts(db: Db, stopped: () => boolean = () => false): Promise<number> {
  let total = 0;
  for (const table of TABLES) {
    for (let changed = await refoldBatch(db, table); changed !== undefined; changed = await refoldBatch(db, table)) {
      total += changed;
      if (stopped()) return total;
    }
  }
  return total;
}
