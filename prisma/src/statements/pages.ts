/** A page's size when the caller does not ask for one (the contract's default `limit`). */
export const DEFAULT_PAGE_SIZE = 20;

/** One page of a list as the server's paging asks for it: at most `take` rows, all older than `beforeId`. */
export interface PageWindow {
  take: number;
  beforeId?: string | undefined;
}

/**
 * Prisma's arguments for a page of rows keyed by `key` (a time-ordered id, or the id of the row a row stands for:
 * a membership stands for its tenant in the caller's tenant list), newest first. Spread `where` into the list's own.
 */
export function newestFirst<Key extends string>(page: PageWindow, key: Key) {
  return {
    where: (page.beforeId === undefined ? {} : { [key]: { lt: page.beforeId } }) as Partial<
      Record<Key, { lt: string }>
    >,
    orderBy: { [key]: 'desc' } as Record<Key, 'desc'>,
    take: page.take,
  };
}
