import { cappedCount, COUNT_CAP, pageOf, readPage, toConnection } from './paging';

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

describe('capped counts', () => {
  it('counts exactly up to COUNT_CAP, and says "more" past it', async () => {
    const upTo = (matches: number) => (take: number) => Promise.resolve(Math.min(matches, take));
    expect(await cappedCount(upTo(0))).toEqual({ totalCount: 0, capped: false });
    expect(await cappedCount(upTo(COUNT_CAP))).toEqual({ totalCount: COUNT_CAP, capped: false });
    expect(await cappedCount(upTo(COUNT_CAP + 1))).toEqual({ totalCount: COUNT_CAP, capped: true });
    expect(await cappedCount(upTo(1_000_000))).toEqual({ totalCount: COUNT_CAP, capped: true });
  });

  it('does not count a first page that holds every match, and counts a full one or a later one', async () => {
    const rows = (n: number) => Array.from({ length: n }, (_, i) => ({ id: `id-${String(n - i).padStart(4, '0')}` }));
    const counts: number[] = [];
    const list = (n: number) => ({
      rows: (page: { take: number }) => Promise.resolve(rows(n).slice(0, page.take)),
      capped: (take: number) => {
        counts.push(take);
        return Promise.resolve(Math.min(n, take));
      },
      present: (row: { id: string }) => row.id,
    });
    expect(await readPage({ limit: 5 }, list(3))).toMatchObject({ totalCount: 3, totalCountCapped: false });
    expect(counts).toEqual([]);
    expect(await readPage({ limit: 5 }, list(7))).toMatchObject({ totalCount: 7, totalCountCapped: false });
    expect(await readPage({ limit: 5, after: 'id-0003' }, list(2))).toMatchObject({ totalCount: 2 });
    expect(counts).toEqual([COUNT_CAP + 1, COUNT_CAP + 1]);
  });
});
