import { preparedName } from './driver';

describe('preparedName', () => {
  it("names one text the same way every time, and two texts apart, within PostgreSQL's 63 characters", () => {
    const a = preparedName('SELECT 1 WHERE $1::int > 0');
    expect(preparedName('SELECT 1 WHERE $1::int > 0')).toBe(a);
    expect(preparedName('SELECT 2 WHERE $1::int > 0')).not.toBe(a);
    expect(a.length).toBeLessThanOrEqual(63);
    expect(a).toMatch(/^[a-z][a-z0-9]*$/);
  });
});
