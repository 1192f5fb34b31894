import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

/**
 * Standard Webhooks signatures, through the reference implementation (`standardwebhooks`): `v1,<base64
 * HMAC-SHA256 of id.timestamp.body>` keyed with the base64 part of a `whsec_` secret.
 */

/** A new endpoint secret: 32 random bytes (the spec asks for 24 to 64), `whsec_` and base64. */
export const newSigningSecret = (): string => `whsec_${randomBytes(32).toString('base64')}`;

export interface SignedHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/** The three headers of one attempt, signed with every secret given (two during a rotation's overlap). */
export function signedHeaders(eventId: string, body: string, secrets: readonly string[], at: Date): SignedHeaders {
  // Whole seconds: the header carries seconds, and the signature must be over the same value.
  const timestamp = new Date(Math.floor(at.getTime() / 1000) * 1000);
  return {
    'webhook-id': eventId,
    'webhook-timestamp': String(timestamp.getTime() / 1000),
    'webhook-signature': secrets.map((secret) => new Webhook(secret).sign(eventId, timestamp, body)).join(' '),
  };
}

/** The secrets an attempt is signed with at `at`: the current one, and the previous one until its overlap ends. */
export function activeSecrets(
  endpoint: { secret: string; previousSecret: string | null; previousSecretExpiresAt: Date | null },
  at: Date,
): string[] {
  const { secret, previousSecret, previousSecretExpiresAt } = endpoint;
  return previousSecret && previousSecretExpiresAt && previousSecretExpiresAt > at
    ? [secret, previousSecret]
    : [secret];
}

/** How long the previous secret keeps signing after a rotation. */
export const ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000;
