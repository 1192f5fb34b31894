import { pagesOn, listOfConnection } from './paging';
import { resultFromText, resultText } from './idempotent-results';

describe('a recorded result', () => {
  it("keeps a nested Connection's list through its text, and adds nothing a partner would see", () => {
    const works = pagesOn(
      { totalCount: 0, edges: [], pageInfo: { hasNextPage: false, endCursor: null } },
      { operationId: 'listWorks', path: { tenant_id: 't1' } },
    );
    const tenant = { id: 't1', name: 'Acme', works };
    const text = resultText(tenant);
    const back = resultFromText(text) as typeof tenant;
    expect(back).toEqual(tenant);
    expect(listOfConnection(back.works)).toEqual({ operationId: 'listWorks', path: { tenant_id: 't1' } });
    // The mark stays out of the JSON a response is sent as.
    expect(JSON.stringify(back)).toBe(JSON.stringify(tenant));
    expect(Object.keys(back.works)).toEqual(['totalCount', 'edges', 'pageInfo']);
  });

  it('is plain JSON for a result without Connections', () => {
    const request = { id: 'r1', title: 'Hi', dueAt: null, tags: ['a'] };
    expect(resultText(request)).toBe(JSON.stringify(request));
    expect(resultFromText(resultText(request))).toEqual(request);
  });
});
