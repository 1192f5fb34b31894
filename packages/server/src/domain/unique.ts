import { nextFreeSlug, slugCandidatesPrefix, slugify } from './slug';

/**
 * True for a unique-constraint violation: Prisma's P2002 on PostgreSQL (@prisma/adapter-pg maps SQLSTATE 23505),
 * or, on the embedded PGlite, whose adapter does not map it, the raw 23505 inside a DriverAdapterError.
 */
export function isUniqueViolation(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, cause } = error as { code?: unknown; cause?: { kind?: unknown; code?: unknown } };
  return code === 'P2002' || (cause?.kind === 'postgres' && cause.code === UNIQUE_VIOLATION);
}

const UNIQUE_VIOLATION = '23505';

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
  for (let attempt = 1; ; attempt++) {
    const slug = nextFreeSlug(base, new Set(await takenSlugs(slugCandidatesPrefix(base))));
    try {
      return await create(slug);
    } catch (error) {
      if (!isUniqueViolation(error) || attempt >= 5) throw error;
    }
  }
}
