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
 * The slug `base-n`, for the n-th creation of a base (n ≥ 2; the first takes `base` itself). The base is shortened
 * when needed so that the suffixed slug still fits in 60 characters.
 */
export function numberedSlug(base: string, n: number): string {
  const suffix = `-${n}`;
  return trimDashes(base.slice(0, SLUG_MAX_LENGTH - suffix.length)) + suffix;
}

function trimDashes(value: string): string {
  return value.replace(/^-+|-+$/g, '');
}
