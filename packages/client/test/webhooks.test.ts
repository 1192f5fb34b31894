import { Webhook } from 'standardwebhooks';
import { verifyWebhook, WebhookVerificationError, type WebhookVerificationReason } from '../src';

// Test vectors of the Standard Webhooks specification (its reference libraries' tests): this secret, message id,
// timestamp and payload sign to exactly this `v1` signature.
const vector = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  timestamp: 1614265330,
  payload: '{"test": 2432232314}',
  signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
};
// The vector's payload is not a works-api event: verifyWebhook accepts its signature and then refuses it as
// `malformed`, so 'malformed' below means "the signature matched".
const at = new Date(vector.timestamp * 1000);
const headers = (signature = vector.signature, timestamp = String(vector.timestamp), id = vector.id) => ({
  'webhook-id': id,
  'webhook-timestamp': timestamp,
  'webhook-signature': signature,
});

const refusal = (run: () => unknown): WebhookVerificationReason | 'accepted' => {
  try {
    run();
    return 'accepted';
  } catch (error) {
    if (error instanceof WebhookVerificationError) return error.reason;
    throw error;
  }
};

describe('verifyWebhook, from a newer server', () => {
  it('returns an event that gained properties, with them, and a type it does not know, as it came', () => {
    const body = JSON.stringify({
      id: vector.id,
      type: 'webhook_endpoint.test',
      createdAt: at.toISOString(),
      tenantId: '0193a1b2-7c3d-7e4f-8a9b-0c1d2e3f4a5b',
      attempt: 2,
      data: {
        webhookEndpoint: { id: '0193a1c0-3a4b-7c5d-8e6f-7a8b9c0d1e2f', url: 'https://h.example.com/x', region: 'eu' },
      },
    });
    const signature = new Webhook(vector.secret).sign(vector.id, at, body);
    const event = verifyWebhook(body, headers(signature), vector.secret, { now: at });
    expect(event).toMatchObject({
      type: 'webhook_endpoint.test',
      attempt: 2,
      data: { webhookEndpoint: { region: 'eu' } },
    });
    const later = JSON.stringify({ ...JSON.parse(body), type: 'invitation.accepted' });
    const signedLater = new Webhook(vector.secret).sign(vector.id, at, later);
    expect(verifyWebhook(later, headers(signedLater), vector.secret, { now: at }).type).toBe('invitation.accepted');
  });
});

describe('verifyWebhook against the Standard Webhooks test vector', () => {
  it('returns the typed event of a signed works-api body', () => {
    const body = JSON.stringify({
      id: vector.id,
      type: 'webhook_endpoint.test',
      createdAt: at.toISOString(),
      tenantId: '0193a1b2-7c3d-7e4f-8a9b-0c1d2e3f4a5b',
      data: { webhookEndpoint: { id: '0193a1c0-3a4b-7c5d-8e6f-7a8b9c0d1e2f', url: 'https://hooks.example.com/x' } },
    });
    const signature = new Webhook(vector.secret).sign(vector.id, at, body);
    const event = verifyWebhook(body, headers(signature), vector.secret, { now: at });
    expect(event.type).toBe('webhook_endpoint.test');
    if (event.type === 'webhook_endpoint.test')
      expect(event.data.webhookEndpoint.url).toBe('https://hooks.example.com/x');
  });

  it("matches the vector's signature byte for byte", () => {
    // A body that is not an event passes the signature check and is refused only as malformed.
    expect(refusal(() => verifyWebhook(vector.payload, headers(), vector.secret, { now: at }))).toBe('malformed');
    expect(refusal(() => verifyWebhook(vector.payload + ' ', headers(), vector.secret, { now: at }))).toBe(
      'bad_signature',
    );
  });

  it('accepts the secret with or without its whsec_ prefix', () => {
    const bare = vector.secret.slice('whsec_'.length);
    expect(refusal(() => verifyWebhook(vector.payload, headers(), bare, { now: at }))).toBe('malformed');
  });

  it('refuses a wrong, empty or partial signature', () => {
    expect(
      refusal(() => verifyWebhook(vector.payload, headers('v1,dawfeoifkpqwoekfpqoekf'), vector.secret, { now: at })),
    ).toBe('bad_signature');
    expect(refusal(() => verifyWebhook(vector.payload, headers('v1,'), vector.secret, { now: at }))).toBe(
      'bad_signature',
    );
    expect(
      refusal(() =>
        verifyWebhook(vector.payload, headers('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJEL'), vector.secret, { now: at }),
      ),
    ).toBe('bad_signature');
    // Another scheme's signature (v1a, asymmetric) is not ours to check.
    expect(
      refusal(() =>
        verifyWebhook(vector.payload, headers(vector.signature.replace('v1,', 'v1a,')), vector.secret, { now: at }),
      ),
    ).toBe('bad_signature');
    // The right signature under another id is wrong.
    expect(
      refusal(() =>
        verifyWebhook(vector.payload, headers(vector.signature, undefined, 'msg_other'), vector.secret, { now: at }),
      ),
    ).toBe('bad_signature');
  });

  it('accepts when any of several signatures matches (a secret rotation)', () => {
    const several = `v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc= ${vector.signature} v2,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=`;
    expect(refusal(() => verifyWebhook(vector.payload, headers(several), vector.secret, { now: at }))).toBe(
      'malformed',
    );
  });

  it('refuses missing headers and a timestamp that is not a number', () => {
    expect(refusal(() => verifyWebhook(vector.payload, { 'webhook-id': vector.id }, vector.secret, { now: at }))).toBe(
      'malformed',
    );
    expect(
      refusal(() => verifyWebhook(vector.payload, headers(vector.signature, 'hello'), vector.secret, { now: at })),
    ).toBe('malformed');
  });

  it('refuses timestamps outside the tolerance, either way (300 s by default)', () => {
    const later = (seconds: number) => new Date(at.getTime() + seconds * 1000);
    expect(refusal(() => verifyWebhook(vector.payload, headers(), vector.secret, { now: later(300) }))).toBe(
      'malformed',
    );
    expect(refusal(() => verifyWebhook(vector.payload, headers(), vector.secret, { now: later(301) }))).toBe('too_old');
    expect(refusal(() => verifyWebhook(vector.payload, headers(), vector.secret, { now: later(-301) }))).toBe(
      'too_new',
    );
    expect(
      refusal(() =>
        verifyWebhook(vector.payload, headers(), vector.secret, { now: later(3600), toleranceSeconds: 3600 }),
      ),
    ).toBe('malformed');
  });

  it('takes a fetch Headers object and a byte body too', () => {
    const body = new TextEncoder().encode(vector.payload);
    expect(refusal(() => verifyWebhook(body, new Headers(headers()), vector.secret, { now: at }))).toBe('malformed');
    const upper = {
      'Webhook-Id': vector.id,
      'Webhook-Timestamp': String(vector.timestamp),
      'Webhook-Signature': [vector.signature],
    };
    expect(refusal(() => verifyWebhook(vector.payload, upper, vector.secret, { now: at }))).toBe('malformed');
  });
});
