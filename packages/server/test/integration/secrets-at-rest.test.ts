import { randomUUID } from 'node:crypto';
import { newId } from '@works-api/prisma';
import { sealAtRest } from '@works-api/prisma';
import { openDatabase } from '@works-api/prisma';
import {
  idempotencyKeySlot,
  parseEncryptionKeys,
  SealedValueError,
  secretBoxOf,
  webhookSecretSlot,
} from '@works-api/prisma';
import { LEGACY, LEGACY_KEY, LEGACY_REPLAY_BODY, LEGACY_WEBHOOK_SECRET } from '@works-api/prisma/legacy-sealed';
import { type Receiver, startReceiver } from '../support/receiver';
import { verifyWebhook } from '@works-api/client';
import { createTenant, freshEmail, ok } from '../support/fixtures';
import { ADMIN_TOKEN, startTestServer, testDatabaseTarget, type TestServer, type TestUser } from '../support/server';

/**
 * Secrets at rest (prisma/src/secret-box.ts): the responses stored for idempotent replays and the webhook signing secrets
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

const db = () => server.database;

/** Every text the database holds in the two tables that could carry a secret. */
async function storedText(): Promise<string> {
  const keys = await db().prisma.idempotencyKey.findMany({ select: { body: true, result: true } });
  const endpoints = await db().prisma.webhookEndpoint.findMany({ select: { secret: true, previousSecret: true } });
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
    const row = await db().prisma.webhookEndpoint.findUniqueOrThrow({ where: { id: endpoint.id } });
    expect(row.secret).toMatch(/^sealed:v2:[0-9a-f]{8}:/);
    expect(row.previousSecret).toMatch(/^sealed:v2:[0-9a-f]{8}:/);
    const box = secretBoxOf(db());
    expect([
      box.open(row.secret, webhookSecretSlot(row.id, 'secret')),
      box.open(row.previousSecret!, webhookSecretSlot(row.id, 'previous_secret')),
    ]).toEqual([rotatedSecret, endpoint.secret]);
  });

  it('seals at start-up what a release before sealing stored in plaintext', async () => {
    const tenant = await createTenant(ada, 'Legacy');
    const secret = 'whsec_' + Buffer.alloc(32, 7).toString('base64');
    const endpoint = await db().prisma.webhookEndpoint.create({
      data: { id: newId(), tenantId: tenant.id, url: 'https://hooks.example.com/legacy', secret, enabled: false },
    });
    const now = new Date();
    const key = { scope: ada.id, key: `legacy-${randomUUID()}` };
    await db().prisma.idempotencyKey.create({
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
    await db().prisma.idempotencyKey.create({
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
    await sealAtRest(db().prisma, secretBoxOf(db()));
    const left = await db().prisma.idempotencyKey.findUniqueOrThrow({ where: { scope_key: expired } });
    expect(left.body).toBe('{"apiKey":{"secret":"wk_legacy_expired"}}');
    const row = await db().prisma.webhookEndpoint.findUniqueOrThrow({ where: { id: endpoint.id } });
    const replay = await db().prisma.idempotencyKey.findUniqueOrThrow({ where: { scope_key: key } });
    expect(row.secret).toMatch(/^sealed:v2:/);
    expect(replay.body).toMatch(/^sealed:v2:/);
    expect(secretBoxOf(db()).open(row.secret, webhookSecretSlot(row.id, 'secret'))).toBe(secret);
    expect(secretBoxOf(db()).open(replay.body!, idempotencyKeySlot(key.scope, key.key))).toContain(
      'wk_legacy_plaintext',
    );
  });

  it('binds each sealed value to its row: a replay moved under another key does not hand its secret out', async () => {
    const bob = await server.createUser('bob');
    const headers = (user: TestUser, key: string) => ({
      Authorization: `Bearer ${user.apiKey}`,
      'Idempotency-Key': key,
    });
    const adaKey = { scope: ada.id, key: `ada-${randomUUID()}` };
    const created = await server.call('/v1/api-keys', {
      method: 'POST',
      headers: headers(ada, adaKey.key),
      json: { name: 'Mine' },
    });
    expect(created.status).toBe(201);
    const adaSecret = (await created.json()).apiKey.secret;
    const bobKey = { scope: bob.id, key: `bob-${randomUUID()}` };
    const own = await server.call('/v1/api-keys', {
      method: 'POST',
      headers: headers(bob, bobKey.key),
      json: { name: 'Mine' },
    });
    expect(own.status).toBe(201);

    // Someone who can write to the database, not read the key, puts Ada's sealed result under Bob's key.
    const { result } = await db().prisma.idempotencyKey.findUniqueOrThrow({ where: { scope_key: adaKey } });
    await db().prisma.idempotencyKey.update({ where: { scope_key: bobKey }, data: { result } });
    const replay = await server.call('/v1/api-keys', {
      method: 'POST',
      headers: headers(bob, bobKey.key),
      json: { name: 'Mine' },
    });
    expect(await replay.text()).not.toContain(adaSecret);
    expect(replay.status).toBe(500); // an integrity failure, logged as one
    expect(server.bugs.splice(0)).toEqual([expect.any(SealedValueError)]);
    expect(() => secretBoxOf(db()).open(result!, idempotencyKeySlot(bobKey.scope, bobKey.key))).toThrow(
      SealedValueError,
    );
  });
});

describe('values sealed before they were bound to their row', () => {
  let legacy: TestServer;
  let receiver: Receiver;
  const tenants: string[] = [];
  beforeAll(async () => {
    receiver = await startReceiver();
    // The suite's keys, and the one the previous release sealed these values with.
    const target = testDatabaseTarget();
    const encryptionKeys = [...(target.encryptionKeys ?? []), ...parseEncryptionKeys(LEGACY_KEY)];
    legacy = await startTestServer({
      database: await openDatabase({ ...target, encryptionKeys }),
      webhooks: { manual: true, onlyTenants: () => tenants },
    });
  });
  afterAll(async () => {
    await legacy.close();
    await receiver.close();
  });

  it('keep opening (replays, signatures), and every start re-seals the webhook secrets bound to their row', async () => {
    const user = await legacy.createUser('legacy');
    const tenant = await createTenant(user, 'Legacy Seal');
    tenants.push(tenant.id);
    const ldb = legacy.database;

    // A replay the previous release stored: served as it was.
    const key = { scope: user.id, key: `legacy-${randomUUID()}` };
    const headers = { Authorization: `Bearer ${user.apiKey}`, 'Idempotency-Key': key.key };
    expect((await legacy.call('/v1/api-keys', { method: 'POST', headers, json: { name: 'Legacy' } })).status).toBe(201);
    // (The previous release stored the response itself; this one records the creation's result instead.)
    await ldb.prisma.idempotencyKey.update({
      where: { scope_key: key },
      data: { status: 201, contentType: 'application/json; charset=utf-8', body: LEGACY.replay, result: null },
    });
    const replay = await legacy.call('/v1/api-keys', { method: 'POST', headers, json: { name: 'Legacy' } });
    expect([replay.status, replay.headers.get('idempotent-replayed')]).toEqual([201, 'true']);
    expect(await replay.json()).toEqual(LEGACY_REPLAY_BODY);

    // A webhook secret the previous release sealed: deliveries are signed with it.
    const endpoint = ok(
      await user.client.POST('/tenants/{tenant_id}/webhook-endpoints', {
        params: { path: { tenant_id: tenant.id } },
        body: { url: receiver.url },
      }),
    ).webhookEndpoint;
    await ldb.prisma.webhookEndpoint.update({ where: { id: endpoint.id }, data: { secret: LEGACY.webhookSecret } });
    ok(
      await user.client.POST('/tenants/{tenant_id}/webhook-endpoints/{endpoint_id}/test', {
        params: { path: { tenant_id: tenant.id, endpoint_id: endpoint.id } },
      }),
    );
    expect(await legacy.dispatcher!.runOnce()).toBe(1);
    const [first] = await receiver.waitFor(1);
    expect(verifyWebhook(first!.body, first!.headers, LEGACY_WEBHOOK_SECRET)).toMatchObject({
      type: 'webhook_endpoint.test',
    });

    // The next start re-seals it, bound to its row, with the first key; the replay is left to expire.
    const box = secretBoxOf(ldb);
    await sealAtRest(ldb.prisma, box);
    const row = await ldb.prisma.webhookEndpoint.findUniqueOrThrow({ where: { id: endpoint.id } });
    expect(row.secret).toMatch(new RegExp(`^sealed:v2:${box.sealingKeyId}:`));
    expect(box.open(row.secret, webhookSecretSlot(endpoint.id, 'secret'))).toBe(LEGACY_WEBHOOK_SECRET);
    expect((await ldb.prisma.idempotencyKey.findUniqueOrThrow({ where: { scope_key: key } })).body).toBe(LEGACY.replay);
  });

  it("fails only the attempt whose secret was moved from another endpoint's row; the others are signed and sent", async () => {
    const user = await legacy.createUser('moved');
    const tenant = await createTenant(user, 'Moved Secret');
    tenants.push(tenant.id);
    const create = async () =>
      ok(
        await user.client.POST('/tenants/{tenant_id}/webhook-endpoints', {
          params: { path: { tenant_id: tenant.id } },
          body: { url: receiver.url },
        }),
      ).webhookEndpoint;
    const [victim, moved] = [await create(), await create()];
    const ldb = legacy.database;
    const { secret } = await ldb.prisma.webhookEndpoint.findUniqueOrThrow({ where: { id: victim.id } });
    await ldb.prisma.webhookEndpoint.update({ where: { id: moved.id }, data: { secret } });
    const before = receiver.received.length;
    for (const endpoint of [moved, victim])
      ok(
        await user.client.POST('/tenants/{tenant_id}/webhook-endpoints/{endpoint_id}/test', {
          params: { path: { tenant_id: tenant.id, endpoint_id: endpoint.id } },
        }),
      );
    expect(await legacy.dispatcher!.runOnce()).toBe(2);
    const received = await receiver.waitFor(before + 1);
    expect(received.slice(before)).toHaveLength(1);
    expect(verifyWebhook(received[before]!.body, received[before]!.headers, victim.secret)).toMatchObject({
      data: { webhookEndpoint: { id: victim.id } },
    });
    const { deliveries } = ok(
      await user.client.GET('/tenants/{tenant_id}/webhook-endpoints/{endpoint_id}/deliveries', {
        params: { path: { tenant_id: tenant.id, endpoint_id: moved.id } },
      }),
    );
    expect(deliveries.edges[0]!.node).toMatchObject({
      status: 'pending',
      attempts: 1,
      lastError: 'the signing secret could not be read',
    });
  });
});
