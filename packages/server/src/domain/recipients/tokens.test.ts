import { answerTokenMatches, hashAnswerToken, isAnswerToken, newAnswerToken } from './tokens';

describe('answer tokens', () => {
  it('carry 256 random bits, base64url, and are stored only as their SHA-256', () => {
    const { token, tokenHash } = newAnswerToken();
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(token, 'base64url')).toHaveLength(32);
    expect(tokenHash).toMatch(/^[0-9a-f]{64}$/);
    expect(tokenHash).toBe(hashAnswerToken(token));
    expect(tokenHash).not.toContain(token);
  });

  it('are never the same twice', () => {
    const tokens = new Set(Array.from({ length: 1000 }, () => newAnswerToken().token));
    expect(tokens.size).toBe(1000);
  });

  it('match only their own hash', () => {
    const a = newAnswerToken();
    const b = newAnswerToken();
    expect(answerTokenMatches(a.token, a.tokenHash)).toBe(true);
    expect(answerTokenMatches(a.token, b.tokenHash)).toBe(false);
    expect(answerTokenMatches(a.token, 'short')).toBe(false);
  });

  it('are recognised by shape before any lookup', () => {
    expect(isAnswerToken(newAnswerToken().token)).toBe(true);
    expect(isAnswerToken('')).toBe(false);
    expect(isAnswerToken('a'.repeat(42))).toBe(false);
    expect(isAnswerToken('a'.repeat(44))).toBe(false);
    expect(isAnswerToken(`${'a'.repeat(42)}=`)).toBe(false);
    expect(isAnswerToken(`${'a'.repeat(42)}/`)).toBe(false);
  });
});
