import type { SecretBox } from '@works-api/prisma';

/**
 * The link every email carries to stop that tenant's emails to that address, `/stop/<token>`, which works without
 * an account. The token names the address's row of the tenant (mail_recipients.id) and vouches for it with a MAC
 * of the service's keys: 16 bytes of id and 16 of HMAC-SHA256, base64url (43 characters). Nothing is stored for it,
 * so every email of the tenant to that address carries the same working link, and none can be made up.
 */
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

const uuidBytes = (id: string): Buffer => Buffer.from(id.replace(/-/g, ''), 'hex');
const uuidOf = (bytes: Buffer): string =>
  bytes.toString('hex').replace(/^(.{8})(.{4})(.{4})(.{4})(.{12})$/, '$1-$2-$3-$4-$5');

export function stopLinkToken(box: SecretBox, recipientId: string): string {
  const id = uuidBytes(recipientId);
  return Buffer.concat([id, box.mac('stop-emails-link', id).subarray(0, 16)]).toString('base64url');
}

/** The recipient row a token names, or null when it is not a token we made (checked without a lookup). */
export function recipientOfStopLink(box: SecretBox, token: string): string | null {
  if (!TOKEN_PATTERN.test(token)) return null;
  const bytes = Buffer.from(token, 'base64url');
  const id = bytes.subarray(0, 16);
  return box.macMatches('stop-emails-link', id, bytes.subarray(16)) ? uuidOf(id) : null;
}
