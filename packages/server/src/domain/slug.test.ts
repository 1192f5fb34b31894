import { nextFreeSlug, slugCandidatesPrefix, slugify, SLUG_MAX_LENGTH } from './slug';

describe('slugify', () => {
  it.each([
    ['Acme Research', 'acme-research'],
    ['  Hello,   World!  ', 'hello-world'],
    ['Crème brûlée à la façon', 'creme-brulee-a-la-facon'],
    ['Straße & Ærø Łódź', 'strasse-aero-lodz'],
    ['C++ / C# -- notes__2026', 'c-c-notes-2026'],
    ['ÅNGSTRÖM', 'angstrom'],
    ['ﬁnance Ⅸ', 'finance-ix'],
    ['Work 🚀 launch', 'work-launch'],
  ])('%j → %j', (name, slug) => {
    expect(slugify(name, 'tenant')).toBe(slug);
  });

  it.each(['東京', '🚀🚀', '---', '   ', 'Ω≈'])('falls back when nothing is usable in %j', (name) => {
    expect(slugify(name, 'work')).toBe('work');
  });

  it('cuts at 60 characters without a trailing dash', () => {
    const slug = slugify(`${'a'.repeat(59)} bcd`, 'tenant');
    expect(slug).toBe('a'.repeat(59));
    expect(slugify('x'.repeat(500), 'tenant')).toHaveLength(SLUG_MAX_LENGTH);
  });
});

describe('nextFreeSlug', () => {
  it('keeps the base when it is free', () => {
    expect(nextFreeSlug('acme', new Set(['acme-2']))).toBe('acme');
  });

  it('appends -2, -3, … on collisions', () => {
    expect(nextFreeSlug('acme', new Set(['acme']))).toBe('acme-2');
    expect(nextFreeSlug('acme', new Set(['acme', 'acme-2', 'acme-3']))).toBe('acme-4');
    expect(nextFreeSlug('acme', new Set(['acme', 'acme-3']))).toBe('acme-2');
  });

  it('shortens a long base so the suffixed slug stays within 60 characters', () => {
    const base = 'b'.repeat(60);
    const next = nextFreeSlug(base, new Set([base]));
    expect(next).toBe(`${'b'.repeat(58)}-2`);
    expect(next.startsWith(slugCandidatesPrefix(base))).toBe(true);
  });
});
