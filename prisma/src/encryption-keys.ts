/**
 * `ENCRYPTION_KEYS`, read apart from the secret box so that the server's configuration can check it without
 * loading any database code.
 */
export const KEY_BYTES = 32;

export class SecretKeyError extends Error {
  override name = 'SecretKeyError';
}

/** `ENCRYPTION_KEYS` → keys, or why not (never echoing a key). */
export function parseEncryptionKeys(value: string): Buffer[] {
  const keys = value
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '');
  if (keys.length === 0) throw new SecretKeyError('ENCRYPTION_KEYS holds no key');
  return keys.map((text, index) => {
    const bytes = Buffer.from(text, 'base64');
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(text) || bytes.length !== KEY_BYTES)
      throw new SecretKeyError(
        `ENCRYPTION_KEYS: key ${index + 1} is not 32 bytes in base64 (make one with: openssl rand -base64 32)`,
      );
    return bytes;
  });
}
