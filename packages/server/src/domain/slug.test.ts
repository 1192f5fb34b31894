import { numberedSlug, slugify, SLUG_MAX_LENGTH } from './slug';

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

describe('numberedSlug', () => {
  it('appends -n', () => {
    expect(numberedSlug('acme', 2)).toBe('acme-2');
    expect(numberedSlug('acme', 20001)).toBe('acme-20001');
  });

  it('shortens a long base so the suffixed slug stays within 60 characters, without a dash before the suffix', () => {
    expect(numberedSlug('b'.repeat(60), 2)).toBe(`${'b'.repeat(58)}-2`);
    expect(numberedSlug(`${'c'.repeat(55)}-dddd`, 123)).toBe(`${'c'.repeat(55)}-123`);
    expect(numberedSlug('e'.repeat(60), 123456)).toHaveLength(SLUG_MAX_LENGTH);
  });
});
