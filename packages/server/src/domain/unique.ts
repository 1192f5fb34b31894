import { nextFreeSlug, slugCandidatesPrefix, slugify } from './slug';

/**
 * True for a unique-constraint violation: Prisma's P2002, or PostgreSQL's 23505 as the PGlite adapter reports it
 * (a DriverAdapterError with `cause: { kind: 'postgres', code: '23505' }`, which Prisma 6 does not map to P2002).
 */
export function isUniqueViolation(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, cause } = error as { code?: unknown; cause?: { kind?: unknown; code?: unknown } };
  return code === 'P2002' || cause?.kind === 'UniqueConstraintViolation' || (cause?.kind === 'postgres' && cause.code === '23505');
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
  for (let attempt = 1; ; attempt++) {
    const slug = nextFreeSlug(base, new Set(await takenSlugs(slugCandidatesPrefix(base))));
    try {
      return await create(slug);
    } catch (error) {
      if (!isUniqueViolation(error) || attempt >= 5) throw error;
    }
  }
}
