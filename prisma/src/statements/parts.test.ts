import { memberMaySql } from './parts';

describe('memberMaySql', () => {
  it('is a condition on the membership of the parameters named, with the roles given and only those', () => {
    const sql = memberMaySql(['admin', 'owner'], ':t', ':u');
    expect(sql).toContain('tenant_id = :t::uuid AND user_id = :u::uuid');
    expect([...sql.matchAll(/'(\w+)'/g)].map((match) => match[1])).toEqual(['admin', 'owner']);
  });
});
