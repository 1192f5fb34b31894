import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * A recipient's answer token: 256 random bits, base64url (43 characters), the last part of the emailed link
 * `/r/<token>`. Only its SHA-256 is stored (answer_links.token_hash); a lookup by that hash finds the link with
 * one index read, and the match is confirmed in constant time. As with API keys, 256 random bits make a fast
 * hash enough. Never logged: the access log writes route templates, and `token` is a redacted log path.
 */
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export interface NewAnswerToken {
  token: string;
  tokenHash: string;
}

export function newAnswerToken(): NewAnswerToken {
  const token = randomBytes(32).toString('base64url');
  return { token, tokenHash: hashAnswerToken(token) };
}

/** True for a string shaped like a token we issue; anything else names no request, without a lookup. */
export const isAnswerToken = (value: string): boolean => TOKEN_PATTERN.test(value);

export const hashAnswerToken = (token: string): string => createHash('sha256').update(token).digest('hex');

/** Constant-time: does the stored hash belong to this token? */
export function answerTokenMatches(token: string, storedHash: string): boolean {
  const presented = Buffer.from(hashAnswerToken(token));
  const stored = Buffer.from(storedHash);
  return presented.length === stored.length && timingSafeEqual(presented, stored);
}
