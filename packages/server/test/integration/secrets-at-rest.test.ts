import { randomUUID } from 'node:crypto';
import { newId } from '../../src/db/ids';
import { sealAtRest } from '../../src/db/seal-at-rest';
import { secretBoxOf } from '../../src/db/secret-box';
import { createTenant, freshEmail } from '../support/fixtures';
import { ADMIN_TOKEN, startTestServer, type TestServer, type TestUser } from '../support/server';

/**
 * Secrets at rest (db/secret-box.ts): the responses stored for idempotent replays and the webhook signing secrets
 * are sealed, so the database (or a dump) holds none of the secrets the API hands out; replays and signatures
 * still carry them in plaintext.
 */
let server: TestServer;
let ada: TestUser;

beforeAll(async () => {
  server = await startTestServer();
  ada = await server.createUser('ada');
});
afterAll(() => server.close());

const db = () => server.database.prisma;

/** Every text the database holds in the two tables that could carry a secret. */
async function storedText(): Promise<string> {
  const keys = await db().idempotencyKey.findMany({ select: { body: true } });
  const endpoints = await db().webhookEndpoint.findMany({ select: { secret: true, previousSecret: true } });
  return JSON.stringify([keys, endpoints]);
}

async function postTwice<Url extends string>(path: Url, json: unknown, authorization: string) {
  const headers = { Authorization: authorization, 'Idempotency-Key': `key-${randomUUID()}` };
  const first = await server.call(path, { method: 'POST', headers, json });
  const replay = await server.call(path, { method: 'POST', headers, json });
  expect([first.status, replay.status, replay.headers.get('idempotent-replayed')]).toEqual([201, 201, 'true']);
  const body = await first.json();
  expect(await replay.json()).toEqual(body);
  return body;
}

describe('secrets at rest', () => {
  it('stores no secret that POST /api-keys, POST /admin/users or a webhook endpoint hands out, and replays them', async () => {
    const tenant = await createTenant(ada, 'Sealed');
    const apiKey = (await postTwice('/v1/api-keys', { name: 'Sealed key' }, `Bearer ${ada.apiKey}`)).apiKey.secret;
    const operator = await postTwice(
      '/v1/admin/users',
      { email: freshEmail('sealed'), firstName: 'S', lastName: 'T' },
      `Bearer ${ADMIN_TOKEN}`,
    );
    const endpoint = (
      await postTwice(
        `/v1/tenants/${tenant.id}/webhook-endpoints`,
        { url: 'https://hooks.example.com/sealed', enabled: false },
        `Bearer ${ada.apiKey}`,
      )
    ).webhookEndpoint;
    const rotated = await server.call(`/v1/tenants/${tenant.id}/webhook-endpoints/${endpoint.id}/rotate-secret`, {
      method: 'POST',
      apiKey: ada.apiKey,
    });
    expect(rotated.status).toBe(200);
    const rotatedSecret = (await rotated.json()).webhookEndpoint.secret;

    const stored = await storedText();
    for (const secret of [apiKey, operator.apiKey.secret, endpoint.secret, rotatedSecret]) {
      expect(typeof secret).toBe('string');
      expect(stored).not.toContain(secret);
      // Not even the random part of a webhook secret (base64 after `whsec_`); a short segment (an API key's
      // prefix) can appear in any ciphertext by chance.
      const randomPart = secret.split('_').at(-1)!;
      if (randomPart.length >= 16) expect(stored).not.toContain(randomPart);
    }
    const row = await db().webhookEndpoint.findUniqueOrThrow({ where: { id: endpoint.id } });
    expect(row.secret).toMatch(/^sealed:v1:[0-9a-f]{8}:/);
    expect(row.previousSecret).toMatch(/^sealed:v1:[0-9a-f]{8}:/);
    const box = secretBoxOf(db());
    expect([box.open(row.secret, 'webhook-secret'), box.open(row.previousSecret!, 'webhook-secret')]).toEqual([
      rotatedSecret,
      endpoint.secret,
    ]);
  });

  it('seals at start-up what a release before sealing stored in plaintext', async () => {
    const tenant = await createTenant(ada, 'Legacy');
    const secret = 'whsec_' + Buffer.alloc(32, 7).toString('base64');
    const endpoint = await db().webhookEndpoint.create({
      data: { id: newId(), tenantId: tenant.id, url: 'https://hooks.example.com/legacy', secret, enabled: false },
    });
    const now = new Date();
    const key = { scope: ada.id, key: `legacy-${randomUUID()}` };
    await db().idempotencyKey.create({
      data: {
        ...key,
        request: 'POST /v1/api-keys',
        bodyHash: 'a'.repeat(64),
        status: 201,
        contentType: 'application/json',
        body: '{"apiKey":{"secret":"wk_legacy_plaintext"}}',
        lockedAt: now,
        createdAt: now,
        expiresAt: new Date(now.getTime() + 60_000),
      },
    });
    // An expired one is the janitor's to delete, not rewritten at start-up (a backlog would hold the start).
    const expired = { scope: ada.id, key: `legacy-expired-${randomUUID()}` };
    await db().idempotencyKey.create({
      data: {
        ...expired,
        request: 'POST /v1/api-keys',
        bodyHash: 'b'.repeat(64),
        status: 201,
        contentType: 'application/json',
        body: '{"apiKey":{"secret":"wk_legacy_expired"}}',
        lockedAt: new Date(now.getTime() - 2 * 86_400_000),
        createdAt: new Date(now.getTime() - 2 * 86_400_000),
        expiresAt: new Date(now.getTime() - 86_400_000),
      },
    });
    await sealAtRest(db(), secretBoxOf(db()));
    const left = await db().idempotencyKey.findUniqueOrThrow({ where: { scope_key: expired } });
    expect(left.body).toBe('{"apiKey":{"secret":"wk_legacy_expired"}}');
    const row = await db().webhookEndpoint.findUniqueOrThrow({ where: { id: endpoint.id } });
    const replay = await db().idempotencyKey.findUniqueOrThrow({ where: { scope_key: key } });
    expect(row.secret).toMatch(/^sealed:v1:/);
    expect(replay.body).toMatch(/^sealed:v1:/);
    expect(secretBoxOf(db()).open(row.secret, 'webhook-secret')).toBe(secret);
    expect(secretBoxOf(db()).open(replay.body!, 'idempotent-response')).toContain('wk_legacy_plaintext');
  });
});
