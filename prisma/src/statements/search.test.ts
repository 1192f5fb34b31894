import { searchTermsSql, searchTermsWhere } from './search';

describe('search terms', () => {
  const terms = { prefixes: ['internationalisa', 'q3'], longWords: ['internationalisation'] };

  it('are a prefix key each, and a long word checked against the text, in Prisma', () => {
    expect(searchTermsWhere({ prefixes: ['rapport', 'ete'], longWords: [] })).toEqual({
      searchPrefixes: { hasEvery: ['rapport', 'ete'] },
    });
    expect(searchTermsWhere(terms)).toEqual({
      searchPrefixes: { hasEvery: ['internationalisa', 'q3'] },
      AND: [{ search: { contains: ' internationalisation' } }],
    });
  });

  it('and in SQL over an alias', () => {
    expect(searchTermsSql(terms, 'w')).toEqual({
      where: 'w.search_prefixes @> :searchPrefixes::text[] AND w.search LIKE :searchWord0',
      params: { searchPrefixes: ['internationalisa', 'q3'], searchWord0: '% internationalisation%' },
    });
  });
});
