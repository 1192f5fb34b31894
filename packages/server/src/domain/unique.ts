import { numberedSlug, slugify } from './slug';

/**
 * True for a unique-constraint violation: Prisma's P2002; inside a batch transaction, the driver adapter's own error
 * (kind UniqueConstraintViolation, or PostgreSQL's SQLSTATE 23505 from adapters that pass it through); or, from a
 * plain statement (prisma/src/statements/send.ts), the driver's error with SQLSTATE 23505.
 */
export function isUniqueViolation(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, cause } = error as {
    code?: unknown;
    cause?: { kind?: unknown; code?: unknown; originalCode?: unknown };
  };
  if (code === 'P2002' || code === '23505') return true;
  return cause?.kind === 'UniqueConstraintViolation' || cause?.code === '23505' || cause?.originalCode === '23505';
}

/**
 * Collisions in a row before giving up. Numbers come from a counter, so a second collision means a slug taken by a
 * name that itself ends in a number past the counter (rows written around the counter): rare, and never many.
 */
const MAX_SLUG_COLLISIONS = 10;

/**
 * Creates a row under a free slug for `name`, in O(log n) however many rows share the name: the base slug first
 * (most names are new); after a collision, `base-n` with n from `nextNumber(base)`, a counter the database bumps
 * in one statement (`UPDATE … SET n = n + 1` under the counter row's lock, see prisma/src/slug-counters.ts). So N
 * concurrent creations of one name get N different numbers and all succeed at their second attempt, with no
 * read of the taken slugs (that read was a `LIKE 'acme%'` scan of every tenant, then a walk through every number
 * taken). A number whose creation then fails is not handed out again: numbers can have gaps, never repeats.
 */
export async function createWithUniqueSlug<T>(
  name: string,
  fallback: string,
  nextNumber: (base: string) => Promise<number>,
  create: (slug: string) => Promise<T>,
): Promise<T> {
  const base = slugify(name, fallback);
  let slug = base;
  for (let attempt = 1; ; attempt++) {
    try {
      return await create(slug);
    } catch (error) {
      if (!isUniqueViolation(error) || attempt >= MAX_SLUG_COLLISIONS) throw error;
    }
    slug = numberedSlug(base, await nextNumber(base));
  }
}
