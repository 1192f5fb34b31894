import { activeSecrets, signedHeaders } from './signing';

// The Standard Webhooks specification's test vector (its reference libraries' tests).
const vector = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  at: new Date(1614265330 * 1000 + 999),
  payload: '{"test": 2432232314}',
  signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
};

describe('signedHeaders', () => {
  it('signs the vector to its expected signature, timestamp in whole seconds', () => {
    expect(signedHeaders(vector.id, vector.payload, [vector.secret], vector.at)).toEqual({
      'webhook-id': vector.id,
      'webhook-timestamp': '1614265330',
      'webhook-signature': vector.signature,
    });
  });

  it('sends one signature per secret, space-separated', () => {
    const other = 'whsec_' + Buffer.alloc(32, 7).toString('base64');
    const { 'webhook-signature': signature } = signedHeaders(
      vector.id,
      vector.payload,
      [other, vector.secret],
      vector.at,
    );
    expect(signature.split(' ')).toHaveLength(2);
    expect(signature.split(' ')[1]).toBe(vector.signature);
  });
});

describe('activeSecrets', () => {
  const endpoint = { secret: 'new', previousSecret: 'old', previousSecretExpiresAt: new Date('2026-11-24T12:00:00Z') };
  it('signs with the previous secret too until its overlap ends', () => {
    expect(activeSecrets(endpoint, new Date('2026-11-24T11:59:59Z'))).toEqual(['new', 'old']);
    expect(activeSecrets(endpoint, new Date('2026-11-24T12:00:00Z'))).toEqual(['new']);
    expect(activeSecrets({ secret: 'only', previousSecret: null, previousSecretExpiresAt: null }, new Date())).toEqual([
      'only',
    ]);
  });
});
