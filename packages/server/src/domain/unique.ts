import { nextFreeSlug, slugCandidatesPrefix, slugify } from './slug';

/** True for Prisma's unique-constraint violation (P2002). */
export function isUniqueViolation(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === 'P2002';
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
