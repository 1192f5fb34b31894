import { searchTermsSql } from './search';

describe('search terms', () => {
  const terms = { prefixes: ['internationalisa', 'q3'], longWords: ['internationalisation'] };

  it('are a prefix key each, and a long word checked against the text, in SQL over an alias', () => {
    expect(searchTermsSql(terms, 'w')).toEqual({
      where: 'w.search_prefixes @> :searchPrefixes::text[] AND w.search LIKE :searchWord0',
      params: { searchPrefixes: ['internationalisa', 'q3'], searchWord0: '% internationalisation%' },
    });
  });
});
