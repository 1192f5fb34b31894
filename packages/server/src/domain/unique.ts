import { nextFreeSlug, slugCandidatesPrefix, slugify } from './slug';

/**
 * True for a unique-constraint violation: Prisma's P2002, or, inside a batch transaction, the driver adapter's
 * own error (kind UniqueConstraintViolation, or PostgreSQL's SQLSTATE 23505 from adapters that pass it through).
 */
export function isUniqueViolation(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, cause } = error as { code?: unknown; cause?: { kind?: unknown; code?: unknown; originalCode?: unknown } };
  if (code === 'P2002') return true;
  return cause?.kind === 'UniqueConstraintViolation' || cause?.code === '23505' || cause?.originalCode === '23505';
}

/**
 * Creates a row under the first free slug for `name`. Two concurrent creations may pick the same slug; the
 * unique index refuses the second, which then looks again.
 */
export async function createWithUniqueSlug<T>(
  name: string,
  fallback: string,
  takenSlugs: (prefix: string) => Promise<string[]>,
  create: (slug: string) => Promise<T>,
): Promise<T> {
  const base = slugify(name, fallback);
  // Most names are new: try the base slug first, and read the taken ones only when the index says it is taken.
  let slug = base;
  for (let attempt = 1; ; attempt++) {
    try {
      return await create(slug);
    } catch (error) {
      if (!isUniqueViolation(error) || attempt >= 5) throw error;
    }
    slug = nextFreeSlug(base, new Set(await takenSlugs(slugCandidatesPrefix(base))));
  }
}
