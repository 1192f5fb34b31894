import { namedStatement } from './named-parameters';

describe('namedStatement', () => {
  it('numbers each name once, in the order of first use, and keeps casts', () => {
    expect(
      namedStatement('UPDATE t SET a = :a::int, b = :b WHERE id = :id::uuid AND a <> :a', { id: 'x', a: 1, b: 'y' }),
    ).toEqual({ text: 'UPDATE t SET a = $1::int, b = $2 WHERE id = $3::uuid AND a <> $1', values: [1, 'y', 'x'] });
  });

  it('leaves quoted text and identifiers alone', () => {
    expect(namedStatement(`SELECT 'a:b' AS ":c", x::text FROM t WHERE y LIKE 'it''s:d' AND z = :z`, { z: 1 })).toEqual({
      text: `SELECT 'a:b' AS ":c", x::text FROM t WHERE y LIKE 'it''s:d' AND z = $1`,
      values: [1],
    });
  });

  it('leaves comments alone, an apostrophe in one included (it opens no quoted text)', () => {
    const text = `SELECT :a -- the tenant's rows, not :b\n  /* nor :c's */ , :d`;
    expect(namedStatement(text, { a: 1, d: 2 })).toEqual({
      text: `SELECT $1 -- the tenant's rows, not :b\n  /* nor :c's */ , $2`,
      values: [1, 2],
    });
  });

  it('leaves an array slice alone', () => {
    expect(namedStatement('SELECT (a)[1:n], (a)[1 : :n]', { n: 2 })).toEqual({
      text: 'SELECT (a)[1:n], (a)[1 : $1]',
      values: [2],
    });
  });

  it('passes null and undefined values as they are given', () => {
    expect(namedStatement('SELECT :a, :b', { a: null, b: undefined }).values).toEqual([null, undefined]);
  });

  it('refuses a name without a value, and a value the statement does not use', () => {
    expect(() => namedStatement('SELECT :a, :b', { a: 1 })).toThrow('statement parameter :b has no value');
    expect(() => namedStatement('SELECT :a', { a: 1, c: 2 })).toThrow('statement does not use :c');
  });
});
