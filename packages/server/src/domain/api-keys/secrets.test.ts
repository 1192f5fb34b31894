import { generateKey, keyMatches, prefixOf, sameSecret } from './secrets';

describe('API key secrets', () => {
  it('generates keys whose prefix finds them and whose hash matches only them', () => {
    const key = generateKey();
    expect(key.secret).toMatch(/^wk_[a-z0-9]{10}_[A-Za-z0-9_-]{43}$/);
    expect(prefixOf(key.secret)).toBe(key.prefix);
    expect(keyMatches(key.secret, key.secretHash)).toBe(true);
    expect(keyMatches(generateKey().secret, key.secretHash)).toBe(false);
    expect(keyMatches(`${key.secret}x`, key.secretHash)).toBe(false);
  });

  it('never repeats a key', () => {
    const secrets = new Set(Array.from({ length: 1000 }, () => generateKey().secret));
    expect(secrets.size).toBe(1000);
  });

  it.each(['', 'wk_short_x', 'Bearer wk_abc', 'wk_ABCDEFGHIJ_' + 'a'.repeat(43), 'wk_abcdefghij_' + 'a'.repeat(42)])(
    'rejects the malformed key %j',
    (presented) => {
      expect(prefixOf(presented)).toBeUndefined();
    },
  );

  it('compares operator tokens of any length', () => {
    expect(sameSecret('token', 'token')).toBe(true);
    expect(sameSecret('token', 'token-longer')).toBe(false);
  });
});
