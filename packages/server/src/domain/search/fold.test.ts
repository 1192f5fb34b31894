import {
  foldedWords,
  MAX_PREFIX_LENGTH,
  MAX_SEARCH_TEXT_LENGTH,
  MAX_QUERY_WORDS,
  queryWords,
  requestSearchText,
  searchText,
  searchTerms,
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

  it('caps the stored text at whole words, however much folding grows the input', () => {
    // NFKD turns this one character into 18 (four Arabic words): 5,000 of them would fold to about 95,000.
    const flood = '\uFDFA'.repeat(5000);
    expect(foldedWords('\uFDFA')).toEqual(['صلى', 'الله', 'عليه', 'وسلم']);
    const recipient = { recipientEmail: 'ada@example.com', recipientFirstName: 'Ada', recipientLastName: '' };
    const flooded = requestSearchText({ title: 'Sign', message: flood, ...recipient });
    expect(flooded.length).toBeLessThanOrEqual(MAX_SEARCH_TEXT_LENGTH);
    expect(flooded.length).toBeGreaterThan(MAX_SEARCH_TEXT_LENGTH - 20);
    // (Side by side, one's last word runs into the next one's first: `وسلمصلى`.)
    expect(flooded.startsWith(' sign صلى الله عليه وسلمصلى الله')).toBe(true);
    expect(flooded).toMatch(/^( [^ ]+)+$/); // whole words, one space before each
    // A word that could never fit (ligatures tripled into one 15,000-letter word) is left out, not the words after it.
    const giant = requestSearchText({ title: 'Sign', message: 'ﬃ'.repeat(5000), ...recipient });
    expect(giant).toBe(' sign ada example com ada');
    // The longest ordinary request (every field at its limit) is kept whole.
    const words = (length: number, word: string) =>
      `${word} `.repeat(Math.ceil(length / (word.length + 1))).slice(0, length);
    const longest = {
      title: words(200, 'title'),
      message: words(5000, 'message'),
      recipientEmail: `${'a'.repeat(64)}@${'b'.repeat(185)}.com`,
      recipientFirstName: words(200, 'first'),
      recipientLastName: words(200, 'last'),
    };
    const whole = Object.values(longest)
      .flatMap(foldedWords)
      .map((word) => ` ${word}`)
      .join('');
    expect(requestSearchText(longest)).toBe(whole);
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
    expect(searchTerms('Rapport ÉTÉ rapport')).toEqual({ prefixes: ['rapport', 'ete'], longWords: [] });
    const long = 'internationalisation';
    expect(long.length).toBeGreaterThan(MAX_PREFIX_LENGTH);
    expect(searchTerms(`${long} q3`)).toEqual({
      prefixes: [long.slice(0, MAX_PREFIX_LENGTH), 'q3'],
      longWords: [long],
    });
  });
});
