import type { components } from '@works-api/api-types';
import { Webhook } from 'standardwebhooks';

/** Every event works-api sends to webhook endpoints: a union told apart by `type` (from the contract). */
export type WebhookEvent = components['schemas']['WebhookEvent'];
export type WebhookEventType = WebhookEvent['type'];

/** Why a webhook was refused: headers or body unusable, no signature matched, or a timestamp out of tolerance. */
export type WebhookVerificationReason = 'malformed' | 'bad_signature' | 'too_old' | 'too_new';

export class WebhookVerificationError extends Error {
  override name = 'WebhookVerificationError';

  constructor(
    readonly reason: WebhookVerificationReason,
    message: string,
  ) {
    super(message);
  }
}

export interface VerifyWebhookOptions {
  /** How far `webhook-timestamp` may be from now, either way (default 300 seconds). */
  toleranceSeconds?: number;
  /** The current time (default: the clock). */
  now?: Date;
}

/** Request headers as frameworks hand them over: a fetch `Headers`, or Node's object (any letter case). */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

const isFetchHeaders = (headers: WebhookHeaders): headers is Headers =>
  typeof (headers as { get?: unknown }).get === 'function';

const headerOf = (headers: WebhookHeaders, name: string): string | undefined => {
  if (isFetchHeaders(headers)) return headers.get(name) ?? undefined;
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() === name) return Array.isArray(value) ? value[0] : value;
  }
  return undefined;
};

/** Compares two strings in time that depends only on their length, so a signature cannot be guessed byte by byte. */
const sameString = (a: string, b: string): boolean => {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return difference === 0;
};

/**
 * Checks a webhook from works-api (Standard Webhooks: `webhook-id`, `webhook-timestamp`, `webhook-signature`)
 * and returns its event. Pass the raw body, exactly as received, before any JSON parsing. `secret` is the
 * endpoint's `whsec_…` secret. Throws `WebhookVerificationError` with a `reason` when the webhook must be
 * refused. Works in Node, browsers and edge runtimes (no Node built-ins).
 */
export function verifyWebhook(
  body: string | Uint8Array,
  headers: WebhookHeaders,
  secret: string,
  { toleranceSeconds = 300, now = new Date() }: VerifyWebhookOptions = {},
): WebhookEvent {
  const id = headerOf(headers, 'webhook-id');
  const timestamp = headerOf(headers, 'webhook-timestamp');
  const signatures = headerOf(headers, 'webhook-signature');
  if (!id || !timestamp || !signatures) {
    throw new WebhookVerificationError(
      'malformed',
      'The webhook-id, webhook-timestamp and webhook-signature headers are required.',
    );
  }
  if (!/^\d{1,12}$/.test(timestamp))
    throw new WebhookVerificationError('malformed', 'webhook-timestamp is not a Unix time in seconds.');
  const seconds = Number(timestamp);
  const nowSeconds = Math.floor(now.getTime() / 1000);
  if (nowSeconds - seconds > toleranceSeconds)
    throw new WebhookVerificationError('too_old', 'The webhook timestamp is too old.');
  if (seconds - nowSeconds > toleranceSeconds)
    throw new WebhookVerificationError('too_new', 'The webhook timestamp is in the future.');

  const text = typeof body === 'string' ? body : new TextDecoder().decode(body);
  // The reference implementation computes the signature; we compare it with each one sent (two during a rotation).
  const expected = new Webhook(secret).sign(id, new Date(seconds * 1000), text).slice('v1,'.length);
  const matched = signatures
    .split(' ')
    .some((versioned) => versioned.startsWith('v1,') && sameString(versioned.slice('v1,'.length), expected));
  if (!matched) throw new WebhookVerificationError('bad_signature', 'No signature matches this secret.');

  let event: unknown;
  try {
    event = JSON.parse(text);
  } catch {
    throw new WebhookVerificationError('malformed', 'The webhook body is not JSON.');
  }
  if (typeof event !== 'object' || event === null || typeof (event as { type?: unknown }).type !== 'string') {
    throw new WebhookVerificationError('malformed', 'The webhook body is not an event.');
  }
  return event as WebhookEvent;
}
