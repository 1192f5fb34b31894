import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * API keys look like `wk_<10 lookup characters>_<43 secret characters>`. The lookup part (the `prefix`, shown in
 * listings) finds the row with one index read; the whole key is checked against a SHA-256 hash. The secret
 * carries 256 random bits, so a slow password hash would add cost without adding safety.
 */
const KEY_PATTERN = /^(wk_[a-z0-9]{10})_[A-Za-z0-9_-]{43}$/;
const PREFIX_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

export interface NewKey {
  secret: string;
  prefix: string;
  secretHash: string;
}

export function generateKey(): NewKey {
  const lookup = Array.from(randomBytes(10), (byte) => PREFIX_ALPHABET[byte % PREFIX_ALPHABET.length]).join('');
  const prefix = `wk_${lookup}`;
  const secret = `${prefix}_${randomBytes(32).toString('base64url')}`;
  return { secret, prefix, secretHash: hashKey(secret) };
}

/** The prefix of a well-formed key, or undefined for anything else. */
export function prefixOf(presented: string): string | undefined {
  return KEY_PATTERN.exec(presented)?.[1];
}

/** SHA-256 in hex, as stored. */
export function hashKey(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

export function keyMatches(presented: string, storedHash: string): boolean {
  return sameLengthEqual(hashKey(presented), storedHash);
}

/** Constant-time comparison of two strings of any length (for the operator token). */
export function sameSecret(a: string, b: string): boolean {
  return sameLengthEqual(hashKey(a), hashKey(b));
}

function sameLengthEqual(a: string, b: string): boolean {
  return a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));
}
