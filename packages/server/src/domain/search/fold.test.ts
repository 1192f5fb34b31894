import {
  foldedWords,
  MAX_PREFIX_LENGTH,
  MAX_QUERY_WORDS,
  queryWords,
  requestSearchText,
  searchText,
  searchWhere,
  workSearchText,
} from './fold';

describe('search folding', () => {
  it('drops accents and case, and splits on anything but letters and digits', () => {
    expect(foldedWords('Rapport financier Été')).toEqual(['rapport', 'financier', 'ete']);
    expect(foldedWords('Grace.Hopper@Example.com')).toEqual(['grace', 'hopper', 'example', 'com']);
    expect(foldedWords('Ærø Straße ﬁne Q3-report')).toEqual(['ærø', 'straße', 'fine', 'q3', 'report']);
    expect(foldedWords('  ...  ')).toEqual([]);
  });

  it('stores every word after one space, so that `LIKE % word%` matches the start of a word', () => {
    expect(searchText('Rapport Été', 'rapport-ete', '')).toBe(' rapport ete rapport ete');
    expect(workSearchText({ name: 'Q3', slug: 'q3', description: 'Figures.' })).toBe(' q3 q3 figures');
    expect(
      requestSearchText({
        title: 'Sign',
        message: '',
        recipientEmail: 'ada@example.com',
        recipientFirstName: 'Ada',
        recipientLastName: '',
      }),
    ).toBe(' sign ada example com ada');
  });

  it('reads a query as its distinct folded words, and refuses one without any or with too many', () => {
    expect(queryWords('Rapport  ÉTÉ rapport')).toEqual(['rapport', 'ete']);
    expect(() => queryWords('!!!')).toThrow('Q must contain a letter or a digit.');
    const tooMany = Array.from({ length: MAX_QUERY_WORDS + 1 }, (_, i) => `w${i}`).join(' ');
    expect(() => queryWords(tooMany)).toThrow(`Q must have at most ${MAX_QUERY_WORDS} words.`);
    expect(queryWords(Array.from({ length: MAX_QUERY_WORDS }, (_, i) => `w${i}`).join(' '))).toHaveLength(
      MAX_QUERY_WORDS,
    );
  });

  it('looks each word up as one prefix key, and a word longer than the keys kept by its first ones and the text', () => {
    expect(searchWhere('Rapport ÉTÉ rapport')).toEqual({ searchPrefixes: { hasEvery: ['rapport', 'ete'] } });
    const long = 'internationalisation';
    expect(long.length).toBeGreaterThan(MAX_PREFIX_LENGTH);
    expect(searchWhere(`${long} q3`)).toEqual({
      searchPrefixes: { hasEvery: [long.slice(0, MAX_PREFIX_LENGTH), 'q3'] },
      AND: [{ search: { contains: ` ${long}` } }],
    });
  });
});
