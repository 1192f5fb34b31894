import type { ExistingKey } from '@works-api/prisma';
import {
  canonicalJson,
  IDEMPOTENCY_LOCK_TIMEOUT_MS,
  IDEMPOTENCY_TTL_MS,
  judgeTakenKey,
  replayPermissions,
} from './idempotency';
import { loadSpec } from './spec';

describe('canonicalJson', () => {
  it('sorts keys at every depth, keeps array order, drops undefined members', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: null }, u: undefined })).toBe(
      '{"a":{"c":null,"d":[3,{"y":2,"z":1}]},"b":1}',
    );
    expect(canonicalJson({ a: 1, b: 2 })).toBe(canonicalJson({ b: 2, a: 1 }));
    expect(canonicalJson(null)).toBe('null');
    expect(canonicalJson('é"')).toBe('"é\\""');
  });
});

describe('judgeTakenKey', () => {
  const now = new Date('2026-11-24T12:00:00.000Z');
  const response = { status: 201, contentType: 'application/json', location: '/v1/tenants/x', body: '{}' };
  const taken = (changes: Partial<ExistingKey> = {}): ExistingKey => ({
    request: 'POST /v1/tenants',
    bodyHash: 'a',
    lockedAt: new Date(now.getTime() - 1000),
    expiresAt: new Date(now.getTime() + IDEMPOTENCY_TTL_MS - 1000),
    finished: true,
    recorded: () => ({ kind: 'response', response }),
    ...changes,
  });
  const judge = (existing: ExistingKey, request = 'POST /v1/tenants', bodyHash = 'a') =>
    judgeTakenKey(existing, { request, bodyHash, now });

  it('replays a finished key for the same request and body', () => {
    expect(judge(taken())).toEqual({ kind: 'done', recorded: { kind: 'response', response } });
  });

  it('refuses another body or another request line, naming the first', () => {
    expect(judge(taken(), 'POST /v1/tenants', 'b')).toEqual({
      kind: 'reused',
      firstRequest: 'POST /v1/tenants',
      sameRequest: true,
    });
    expect(judge(taken(), 'POST /v1/me/api-keys')).toMatchObject({ kind: 'reused', sameRequest: false });
  });

  it('says in use while the first request runs, and retakes it once its holder is presumed dead', () => {
    expect(judge(taken({ finished: false }))).toEqual({ kind: 'in_use' });
    const abandoned = taken({ finished: false, lockedAt: new Date(now.getTime() - IDEMPOTENCY_LOCK_TIMEOUT_MS - 1) });
    expect(judge(abandoned)).toBe('retake');
    // Only by the same request: another one is still a misuse of the key.
    expect(judge(abandoned, 'POST /v1/tenants', 'b')).toMatchObject({ kind: 'reused' });
  });

  it('retakes an expired key whatever it was used for, without opening its response', () => {
    const expired = taken({
      expiresAt: now,
      recorded: () => {
        throw new Error('an expired response is never read');
      },
    });
    expect(judge(expired)).toBe('retake');
    expect(judge(expired, 'POST /v1/me/api-keys', 'b')).toBe('retake');
  });
});

describe('replayPermissions', () => {
  it('names the permission a replay re-checks for every creation inside a tenant, and for no other', () => {
    const creations = loadSpec().operations.filter((operation) => operation.takes.idempotencyKey);
    const inTenant = creations.filter((operation) => operation.path.startsWith('/tenants/{tenant_id}'));
    expect(Object.keys(replayPermissions).sort()).toEqual(inTenant.map((operation) => operation.operationId).sort());
    // The others answer with what the caller made for themselves (a tenant, an API key, an operator's user).
    expect(
      creations
        .filter((operation) => !inTenant.includes(operation))
        .map((o) => o.operationId)
        .sort(),
    ).toEqual(['adminCreateUser', 'createApiKey', 'createTenant']);
  });
});
