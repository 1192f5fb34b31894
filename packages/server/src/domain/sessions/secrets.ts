import { createHash, randomBytes, randomInt } from 'node:crypto';

/**
 * The secrets of sessions and emailed sign-in. Each carries at least 128 random bits (the code aside, which is
 * short so that a person can type it, and is bounded by its address, its 15 minutes and 5 wrong tries), and only
 * its SHA-256 is stored: a copy of the database opens no session.
 */

/** How long an emailed sign-in link and code work, from the moment the email is sent. */
export const SIGN_IN_TTL_MS = 15 * 60_000;
/** Wrong codes for one address's live sign-ins before their codes stop working (the links still do). */
export const MAX_CODE_FAILURES = 5;

/** `ws_` and 43 base64url characters: 256 random bits, the value of the session cookie. */
const SESSION_PATTERN = /^ws_[A-Za-z0-9_-]{43}$/;
/** 43 base64url characters: the sign-in link's token (256 bits). */
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;
/** The code's alphabet: no 0/O, 1/I/L, so it reads unambiguously on another device. */
const CODE_ALPHABET = 'ABCDEFGHJKMNPQRSTUVWXYZ23456789';
const CODE_LENGTH = 8;

export const sha256 = (value: string): string => createHash('sha256').update(value).digest('hex');

export function newSessionSecret(): { cookieValue: string; tokenHash: string } {
  const cookieValue = `ws_${randomBytes(32).toString('base64url')}`;
  return { cookieValue, tokenHash: sha256(cookieValue) };
}

/** The hash of a presented session cookie, or undefined when it is not one we could have made. */
export const sessionHashOf = (presented: string): string | undefined =>
  SESSION_PATTERN.test(presented) ? sha256(presented) : undefined;

export interface SignInSecret {
  token: string;
  tokenHash: string;
  /** `ABCD-EFGH`: 8 characters of 31 (about 40 bits). */
  code: string;
  codeHash: string;
}

export function newSignInSecret(): SignInSecret {
  const token = randomBytes(32).toString('base64url');
  const raw = Array.from({ length: CODE_LENGTH }, () => CODE_ALPHABET[randomInt(CODE_ALPHABET.length)]).join('');
  const code = `${raw.slice(0, 4)}-${raw.slice(4)}`;
  return { token, tokenHash: sha256(token), code, codeHash: codeHashOf(code)! };
}

/** The hash of a typed code (case, spaces and dashes ignored), or undefined when it cannot be one of ours. */
export function codeHashOf(typed: string): string | undefined {
  const raw = typed.toUpperCase().replace(/[\s-]/g, '');
  if (raw.length !== CODE_LENGTH || [...raw].some((char) => !CODE_ALPHABET.includes(char))) return undefined;
  return sha256(`code:${raw}`);
}

/** The hash of a presented link token, or undefined when it cannot be one of ours. */
export const tokenHashOf = (presented: string): string | undefined =>
  TOKEN_PATTERN.test(presented) ? sha256(presented) : undefined;

/**
 * The link in the email: the console's sign-in page, the token in the fragment, which a browser never sends to a
 * server: it reaches no access log, no proxy and no Referer, and the page posts it (POST /v1/sessions).
 */
export const signInLink = (publicUrl: string, token: string): string => `${publicUrl}/console/sign-in#token=${token}`;
