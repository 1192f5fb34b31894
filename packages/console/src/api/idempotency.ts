import { useRef } from 'react';

/**
 * A random key that needs no secure context (crypto.randomUUID does: the console may be opened over plain HTTP
 * on a LAN address), from crypto.getRandomValues, which every browser has.
 */
export function randomKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('');
}

/**
 * One Idempotency-Key per thing the user means to create. Submitting the same body again (a double click, a retry
 * after a lost response) reuses the key, so the server replays the first creation instead of making a second;
 * a different body gets a fresh key (reusing one with another body would be a 422). `done()` after a success
 * starts over, so the next creation of the same body is a new one.
 */
export function useIdempotencyKey(): { keyFor(body: unknown): string; done(): void } {
  const current = useRef<{ key: string; body: string } | null>(null);
  return {
    keyFor(body) {
      const json = JSON.stringify(body);
      if (current.current?.body !== json) current.current = { key: randomKey(), body: json };
      return current.current.key;
    },
    done() {
      current.current = null;
    },
  };
}
