/**
 * Slugs: lower-case ASCII derived from a name. Accents are folded, every other run of characters becomes `-`,
 * the result is trimmed of dashes and cut to 60 characters. A name with nothing usable gets the fallback.
 */
export const SLUG_MAX_LENGTH = 60;

// Letters that Unicode decomposition does not fold to ASCII on its own.
const extraFolds: Record<string, string> = {
  ß: 'ss',
  æ: 'ae',
  œ: 'oe',
  ø: 'o',
  đ: 'd',
  ð: 'd',
  þ: 'th',
  ł: 'l',
  ı: 'i',
  ħ: 'h',
  ŧ: 't',
};

export function slugify(name: string, fallback: string): string {
  const folded = name
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/[ßæœøđðþłıħŧ]/g, (letter) => extraFolds[letter] ?? letter);
  const slug = trimDashes(folded.replace(/[^a-z0-9]+/g, '-').slice(0, SLUG_MAX_LENGTH));
  return slug === '' ? fallback : slug;
}

/**
 * The first free slug among `base`, `base-2`, `base-3`, … given the slugs already taken that start with `base`
 * (with `skip`, the one after `skip` other free ones). The base is shortened when needed so that a suffixed slug
 * still fits in 60 characters.
 */
export function nextFreeSlug(base: string, taken: ReadonlySet<string>, skip = 0): string {
  let free = 0;
  if (!taken.has(base) && free++ === skip) return base;
  for (let n = 2; ; n++) {
    const suffix = `-${n}`;
    const candidate = trimDashes(base.slice(0, SLUG_MAX_LENGTH - suffix.length)) + suffix;
    if (!taken.has(candidate) && free++ === skip) return candidate;
  }
}

/** The prefix that every slug `nextFreeSlug` may pick for `base` starts with (for a LIKE query). */
export function slugCandidatesPrefix(base: string): string {
  // Shortened bases still share the first 50 characters (a suffix is at most 10 characters long).
  return trimDashes(base.slice(0, SLUG_MAX_LENGTH - 10));
}

function trimDashes(value: string): string {
  return value.replace(/^-+|-+$/g, '');
}
