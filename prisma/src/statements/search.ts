import type { Db } from '../handle';
import { sendStatement } from './send';

/**
 * The one-off re-fold of the search texts (migration 20261127021000_search_refold): its progress per table, the
 * rows it reads in id order, and the update of the texts that differ.
 */

/** The tables whose search text is re-folded. */
export type RefoldTable = 'works' | 'requests';

/** How far the re-fold of a table got (null: not started). */
export function findRefoldProgress(db: Db, table: RefoldTable) {
  return db.prisma.searchRefold.findUnique({ where: { tableName: table } });
}

/** Records how far the re-fold of a table got. */
export async function saveRefoldProgress(
  db: Db,
  table: RefoldTable,
  progress: { afterId: string | null; doneAt: Date | null },
): Promise<void> {
  await db.prisma.searchRefold.upsert({
    where: { tableName: table },
    create: { tableName: table, ...progress },
    update: progress,
  });
}

/** The next `take` rows of a table after `afterId` (by id). */
const pageAfter = (afterId: string | null, take: number) => ({
  where: afterId === null ? {} : { id: { gt: afterId } },
  orderBy: { id: 'asc' as const },
  take,
});

/** The next works after `afterId`, with what their search text is folded from and the stored text. */
export function worksToRefold(db: Db, afterId: string | null, take: number) {
  return db.prisma.work.findMany({
    ...pageAfter(afterId, take),
    select: { id: true, name: true, slug: true, description: true, search: true },
  });
}

/** The next requests after `afterId`, with what their search text is folded from and the stored text. */
export function requestsToRefold(db: Db, afterId: string | null, take: number) {
  return db.prisma.request.findMany({
    ...pageAfter(afterId, take),
    select: {
      id: true,
      title: true,
      message: true,
      recipientEmail: true,
      recipientFirstName: true,
      recipientLastName: true,
      search: true,
    },
  });
}

/**
 * Writes the folded search texts, each only where the row still holds the text read (a rename in between wrote its
 * own fold); returns how many rows changed.
 */
export async function updateSearchTexts(
  db: Db,
  table: RefoldTable,
  rows: ReadonlyArray<{ id: string; search: string; folded: string }>,
): Promise<number> {
  const changed = await sendStatement(
    db,
    `UPDATE ${table} t SET search = v.folded
             FROM unnest(:ids::uuid[], :read::text[], :folded::text[]) AS v (id, old, folded)
             WHERE t.id = v.id AND t.search = v.old
             RETURNING t.id`,
    { ids: rows.map((row) => row.id), read: rows.map((row) => row.search), folded: rows.map((row) => row.folded) },
  );
  return changed.length;
}

/**
 * What a search looks up (the server folds the words: search/fold.ts): the stored text must have a word starting
 * with each of `prefixes` (each one key of the GIN index on (tenant_id, search_prefixes), the array of every prefix
 * of every stored word) and, for a word longer than the prefixes kept, the word itself (`LIKE '% word%'`: the words
 * are letters and digits only, nothing LIKE reads as a wildcard).
 */
export interface SearchTerms {
  prefixes: readonly string[];
  longWords: readonly string[];
}

/** `terms` as SQL over the table aliased `alias`, for the lists read by one plain statement. */
export function searchTermsSql(terms: SearchTerms, alias: string): { where: string; params: Record<string, unknown> } {
  const where = [`${alias}.search_prefixes @> :searchPrefixes::text[]`];
  const params: Record<string, unknown> = { searchPrefixes: terms.prefixes };
  terms.longWords.forEach((word, i) => {
    where.push(`${alias}.search LIKE :searchWord${i}`);
    params[`searchWord${i}`] = `% ${word}%`;
  });
  return { where: where.join(' AND '), params };
}
