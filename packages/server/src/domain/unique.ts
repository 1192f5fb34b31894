import { nextFreeSlug, slugCandidatesPrefix, slugify } from './slug';

/**
 * True for a unique-constraint violation: Prisma's P2002; inside a batch transaction, the driver adapter's own error
 * (kind UniqueConstraintViolation, or PostgreSQL's SQLSTATE 23505 from adapters that pass it through); or, from a
 * plain statement (db/plain-statement.ts), the driver's error with SQLSTATE 23505.
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

/** Collisions in a row before giving up: enough for dozens of concurrent creations of one name. */
const MAX_ATTEMPTS = 20;
/** Up to this many collisions, everyone picks the first free slug, so numbers stay without gaps. */
const IN_ORDER_ATTEMPTS = 8;

/**
 * Creates a row under the first free slug for `name`. Two concurrent creations may pick the same slug; the
 * unique index refuses the second, which then looks again, so of N at once one wins each round. Creations that
 * keep colliding (more than IN_ORDER_ATTEMPTS of one name at once) then spread out, each picking at random among
 * the next few free slugs, so that several win a round and none runs out of attempts (a 500 before: all picked
 * the same slug and the last ones gave up after five rounds).
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
      if (!isUniqueViolation(error) || attempt >= MAX_ATTEMPTS) throw error;
    }
    const skip = attempt <= IN_ORDER_ATTEMPTS ? 0 : Math.floor(Math.random() * (attempt - IN_ORDER_ATTEMPTS + 1));
    slug = nextFreeSlug(base, new Set(await takenSlugs(slugCandidatesPrefix(base))), skip);
  }
}
