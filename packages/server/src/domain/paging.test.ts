import { pageOf, toConnection } from './paging';

const id = '0193a1b2-7c3d-7e4f-8a9b-0c1d2e3f4a5b';

describe('paging', () => {
  it('reads one row more than the limit (20 by default), after the id a cursor stood for', () => {
    expect(pageOf({})).toEqual({ take: 21 });
    expect(pageOf({ limit: 5, after: id })).toEqual({ take: 6, beforeId: id });
  });

  it('drops the extra row and reports the next page, its positions as ids (the HTTP layer makes them cursors)', () => {
    const rows = [{ id: 'c' }, { id: 'b' }, { id: 'a' }];
    const connection = toConnection(rows, { take: 3 }, 10, (row) => row.id);
    expect(connection.edges.map((edge) => edge.node)).toEqual(['c', 'b']);
    expect(connection.pageInfo).toEqual({ hasNextPage: true, endCursor: 'b' });
    expect(connection.totalCount).toBe(10);
  });

  it('ends an empty page with a null cursor', () => {
    expect(toConnection([], { take: 21 }, 0, (row: { id: string }) => row).pageInfo).toEqual({
      hasNextPage: false,
      endCursor: null,
    });
  });
});
