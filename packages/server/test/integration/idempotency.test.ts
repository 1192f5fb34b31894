import { hash, randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { completeIdempotencyKey, deleteExpiredIdempotencyKeys, releaseIdempotencyKey } from '@works-api/prisma';
import { canonicalJson, claimKey, IDEMPOTENCY_LOCK_TIMEOUT_MS } from '../../src/http/idempotency';
import { loadSpec } from '../../src/http/spec';
import { createTenant, freshEmail, requestInNewWork } from '../support/fixtures';
import { eventually } from '../support/load';
import { addMember } from '../support/roles';
import { ADMIN_TOKEN, startTestServer, type TestServer, type TestUser } from '../support/server';

/** Idempotency-Key on every creating POST: replay, mismatch, concurrent use, scope, expiry. */
let server: TestServer;
let ada: TestUser;
let bob: TestUser;

beforeAll(async () => {
  server = await startTestServer();
  ada = await server.createUser('ada');
  bob = await server.createUser('bob');
});
afterAll(() => server.close());

const db = () => server.database;
const newKey = () => `key-${randomUUID()}`;

function post<Url extends string>(path: Url, user: TestUser | null, json: unknown, key?: string) {
  const headers: Record<string, string> = {};
  if (user === null) headers.Authorization = `Bearer ${ADMIN_TOKEN}`;
  if (key !== undefined) headers['Idempotency-Key'] = key;
  return server.call(path, { method: 'POST', apiKey: user?.apiKey, headers, json });
}

async function worksNamed(tenantId: string, name: string) {
  return db().prisma.work.count({ where: { tenantId, name } });
}

describe('replay', () => {
  it('replays the first status, body, Location and ETag for the same key and body, and creates nothing', async () => {
    const tenant = await createTenant(ada);
    const key = newKey();
    const path = `/v1/tenants/${tenant.id}/works`;
    const first = await post(path, ada, { name: 'Replayed work', description: 'once' }, key);
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const firstBody = await first.text();

    const retry = await post(path, ada, { name: 'Replayed work', description: 'once' }, key);
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(await retry.text()).toBe(firstBody);
    expect(retry.headers.get('location')).toBe(first.headers.get('location'));
    expect(retry.headers.get('etag')).toBe(first.headers.get('etag'));
    expect(retry.headers.get('content-type')).toBe(first.headers.get('content-type'));
    expect(await worksNamed(tenant.id, 'Replayed work')).toBe(1);
  });

  it("re-checks the caller's role first: a demoted admin gets 403, a removed member 404, not the stored secret", async () => {
    const tenant = await createTenant(ada, 'Replayed secrets');
    const carol = await server.createUser('carol');
    await addMember(ada, tenant.id, carol, 'admin');
    const key = newKey();
    const path = `/v1/tenants/${tenant.id}/webhook-endpoints` as const;
    const body = { url: 'http://127.0.0.1:9/replayed' };
    const first = await post(path, carol, body, key);
    expect(first.status).toBe(201);
    const { webhookEndpoint } = await first.json();
    expect(webhookEndpoint.secret).toMatch(/^whsec_/);
    // While Carol may still manage webhooks, her retry is replayed.
    expect((await post(path, carol, body, key)).headers.get('idempotent-replayed')).toBe('true');

    // Demoted to member: the replay would hand her the signing secret she may no longer see.
    const member = `/v1/tenants/${tenant.id}/members/${carol.id}` as const;
    expect((await server.callAs(ada, 'PATCH', member, { role: 'member' })).status).toBe(200);
    const demoted = await post(path, carol, body, key);
    expect(demoted.status).toBe(403);
    expect(demoted.headers.get('idempotent-replayed')).toBeNull();
    const refused = await demoted.text();
    expect(refused).not.toContain(webhookEndpoint.secret);
    expect(JSON.parse(refused)).toMatchObject({ code: 'forbidden' });

    // Removed: the tenant no longer exists for her.
    expect((await server.callAs(ada, 'DELETE', member)).status).toBe(204);
    const removed = await post(path, carol, body, key);
    expect(removed.status).toBe(404);
    expect(await removed.text()).not.toContain(webhookEndpoint.secret);
    expect(await db().prisma.webhookEndpoint.count({ where: { tenantId: tenant.id } })).toBe(1);
  });

  it('treats the same JSON with its properties in another order as the same body', async () => {
    const tenant = await createTenant(ada);
    const key = newKey();
    const path = `/v1/tenants/${tenant.id}/works`;
    expect((await post(path, ada, { name: 'Ordered', description: 'd' }, key)).status).toBe(201);
    const retry = await post(path, ada, { description: 'd', name: 'Ordered' }, key);
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(await worksNamed(tenant.id, 'Ordered')).toBe(1);
  });

  it('works on every creating POST, each recording its result with its effect and replaying it as first answered', async () => {
    const { tenant, work } = await requestInNewWork(ada);
    const invited = freshEmail('invited');
    const creations: Record<string, [string, TestUser | null, unknown, number?]> = {
      createTenant: ['/v1/tenants', ada, { name: 'Idempotent tenant' }],
      createWork: [`/v1/tenants/${tenant.id}/works`, ada, { name: 'Idempotent work' }],
      createRequest: [
        `/v1/tenants/${tenant.id}/works/${work.id}/requests`,
        ada,
        { title: 'Once', recipient: { email: 'r@example.com' } },
      ],
      createRequestBatch: [
        `/v1/tenants/${tenant.id}/works/${work.id}/request-batches`,
        ada,
        { defaults: { title: 'Batched once' }, items: [{ recipient: { email: 'b@example.com' } }] },
      ],
      // An invitation (202) is replayed too, and invites once.
      addMember: [`/v1/tenants/${tenant.id}/members`, ada, { email: invited, role: 'member' }, 202],
      createWebhookEndpoint: [
        `/v1/tenants/${tenant.id}/webhook-endpoints`,
        ada,
        { url: 'https://hooks.example.com/once', enabled: false },
      ],
      createApiKey: ['/v1/api-keys', ada, { name: 'Idempotent key' }],
      adminCreateUser: ['/v1/admin/users', null, { email: freshEmail('u'), firstName: 'U', lastName: 'V' }],
    };
    // Every operation the contract gives an Idempotency-Key.
    const keyed = loadSpec().operations.filter((operation) => operation.takes.idempotencyKey);
    expect(Object.keys(creations).sort()).toEqual(keyed.map((operation) => operation.operationId).sort());
    for (const [path, user, body, status = 201] of Object.values(creations)) {
      const key = newKey();
      const first = await post(path, user, body, key);
      expect([path, first.status]).toEqual([path, status]);
      // The creation recorded what it returned, in its own statement or transaction: nothing else was stored.
      const row = await db().prisma.idempotencyKey.findFirstOrThrow({ where: { key } });
      expect([path, row.result !== null, row.status, row.body]).toEqual([path, true, null, null]);
      const retry = await post(path, user, body, key);
      expect([path, retry.status, retry.headers.get('idempotent-replayed')]).toEqual([path, status, 'true']);
      for (const header of ['location', 'etag', 'content-type'])
        expect([path, header, retry.headers.get(header)]).toEqual([path, header, first.headers.get(header)]);
      expect(await retry.json()).toEqual(await first.json());
    }
    expect(await db().prisma.tenant.count({ where: { name: 'Idempotent tenant', ownerId: ada.id } })).toBe(1);
    expect(await db().prisma.request.count({ where: { workId: work.id, title: 'Once' } })).toBe(1);
    expect(await db().prisma.request.count({ where: { workId: work.id, title: 'Batched once' } })).toBe(1);
    expect(await db().prisma.apiKey.count({ where: { userId: ada.id, name: 'Idempotent key' } })).toBe(1);
    expect(await db().prisma.invitation.count({ where: { email: invited } })).toBe(1);
    expect(await db().prisma.webhookEndpoint.count({ where: { tenantId: tenant.id } })).toBe(1);
  });

  it('is a typed header parameter of the client', async () => {
    const key = newKey();
    const send = () =>
      ada.client.POST('/tenants', {
        params: { header: { 'Idempotency-Key': key } },
        body: { name: 'Through the client' },
      });
    const first = await send();
    const retry = await send();
    expect(first.response.status).toBe(201);
    expect(retry.response.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.data).toEqual(first.data);
  });

  it('replays an error the first request got, too (the key records what happened)', async () => {
    const tenant = await createTenant(ada);
    const key = newKey();
    const path = `/v1/tenants/${tenant.id}/members`;
    const body = { email: ada.email, role: 'member' };
    const first = await post(path, ada, body, key);
    expect(first.status).toBe(409);
    const retry = await post(path, ada, body, key);
    expect(retry.status).toBe(409);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await retry.json()).toEqual(await first.json());
  });

  it('creates every time without a key', async () => {
    const tenant = await createTenant(ada);
    const path = `/v1/tenants/${tenant.id}/works`;
    expect((await post(path, ada, { name: 'Keyless' })).status).toBe(201);
    expect((await post(path, ada, { name: 'Keyless' })).status).toBe(201);
    expect(await worksNamed(tenant.id, 'Keyless')).toBe(2);
  });
});

describe('mismatch', () => {
  it('answers 422 idempotency_key_reused for the same key with another body, and creates nothing more', async () => {
    const tenant = await createTenant(ada);
    const key = newKey();
    const path = `/v1/tenants/${tenant.id}/works`;
    expect((await post(path, ada, { name: 'First body' }, key)).status).toBe(201);
    const other = await post(path, ada, { name: 'Second body' }, key);
    expect(other.status).toBe(422);
    expect(other.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await other.json()).toMatchObject({ status: 422, code: 'idempotency_key_reused' });
    expect(await worksNamed(tenant.id, 'Second body')).toBe(0);
    expect(await worksNamed(tenant.id, 'First body')).toBe(1);
  });

  it('answers 422 for the same key and body sent to another operation or resource', async () => {
    const one = await createTenant(ada);
    const two = await createTenant(ada);
    const key = newKey();
    expect((await post(`/v1/tenants/${one.id}/works`, ada, { name: 'Same body' }, key)).status).toBe(201);
    const elsewhere = await post(`/v1/tenants/${two.id}/works`, ada, { name: 'Same body' }, key);
    expect(elsewhere.status).toBe(422);
    expect((await elsewhere.json()).detail).toContain(`POST /v1/tenants/${one.id}/works`);
    expect(await worksNamed(two.id, 'Same body')).toBe(0);
  });

  it('refuses a key that is empty, too long or not visible ASCII (400, nothing stored)', async () => {
    for (const key of ['', 'x'.repeat(256), 'tab\there', 'é']) {
      const res = await post('/v1/tenants', ada, { name: 'Bad key' }, key);
      expect(res.status).toBe(400);
    }
    expect(await db().prisma.tenant.count({ where: { name: 'Bad key' } })).toBe(0);
  });
});

describe('scope', () => {
  it('keeps keys per user: the same key from another user is another key', async () => {
    const key = newKey();
    const adas = await post('/v1/tenants', ada, { name: 'Scoped' }, key);
    const bobs = await post('/v1/tenants', bob, { name: 'Scoped' }, key);
    expect(adas.status).toBe(201);
    expect(bobs.status).toBe(201);
    expect(bobs.headers.get('idempotent-replayed')).toBeNull();
    expect((await bobs.json()).tenant.id).not.toBe((await adas.json()).tenant.id);
    expect(await db().prisma.idempotencyKey.count({ where: { key } })).toBe(2);
  });
});

describe('concurrent use', () => {
  it('answers 409 idempotency_key_in_use while the first request with the key is still running', async () => {
    const tenant = await createTenant(ada);
    const key = newKey();
    const path = `/v1/tenants/${tenant.id}/works`;
    const body = { name: 'In flight' };
    // The first request, still running in some server process, holds the key.
    const claim = await claimKey(
      db(),
      { scope: ada.id, key },
      { request: `POST ${path}`, bodyHash: bodyHash(body), now: new Date() },
    );
    expect(claim.kind).toBe('claimed');

    const second = await post(path, ada, body, key);
    expect(second.status).toBe(409);
    expect(await second.json()).toMatchObject({ status: 409, code: 'idempotency_key_in_use' });
    expect(await worksNamed(tenant.id, 'In flight')).toBe(0);
  });

  it('creates exactly one row under a burst of identical requests with one key', async () => {
    const tenant = await createTenant(ada);
    const key = newKey();
    const path = `/v1/tenants/${tenant.id}/works`;
    const responses = await Promise.all(Array.from({ length: 12 }, () => post(path, ada, { name: 'Burst' }, key)));
    const outcomes = await Promise.all(
      responses.map(async (res) => ({
        status: res.status,
        replayed: res.headers.get('idempotent-replayed'),
        body: await res.json(),
      })),
    );
    const originals = outcomes.filter((o) => o.status === 201 && o.replayed === null);
    const replays = outcomes.filter((o) => o.status === 201 && o.replayed === 'true');
    const inUse = outcomes.filter((o) => o.status === 409);
    expect(originals).toHaveLength(1);
    expect(replays.length + inUse.length).toBe(11);
    for (const replay of replays) expect(replay.body).toEqual(originals[0]!.body);
    for (const refused of inUse) expect(refused.body.code).toBe('idempotency_key_in_use');
    expect(await worksNamed(tenant.id, 'Burst')).toBe(1);

    const later = await post(path, ada, { name: 'Burst' }, key);
    expect([later.status, later.headers.get('idempotent-replayed')]).toEqual([201, 'true']);
  });

  const onPostgres = process.env.DATABASE_URL ? it : it.skip;
  if (!process.env.DATABASE_URL) {
    console.log('idempotency: the row-lock test of a slow first request runs on PostgreSQL only (set DATABASE_URL)');
  }
  onPostgres('answers 409 to a retry while the first request waits inside the database, then replays it', async () => {
    const tenant = await createTenant(ada);
    const key = newKey();
    const path = `/v1/tenants/${tenant.id}/works`;
    const blocker = new Client({ connectionString: process.env.DATABASE_URL });
    await blocker.connect();
    try {
      // Hold back every insert into works, so the first request stops right before creating its row.
      await blocker.query('BEGIN');
      await blocker.query('LOCK TABLE works IN EXCLUSIVE MODE');
      const first = post(path, ada, { name: 'Slow first' }, key);
      await eventually(
        async () => {
          const { rows } = await blocker.query(
            `SELECT count(*)::int AS waiting FROM pg_locks
             WHERE relation = 'works'::regclass AND NOT granted
               AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
          );
          expect(rows[0].waiting).toBeGreaterThan(0);
        },
        { pauseMs: 10 },
      );
      const retry = await post(path, ada, { name: 'Slow first' }, key);
      expect(retry.status).toBe(409);
      expect((await retry.json()).code).toBe('idempotency_key_in_use');
      await blocker.query('COMMIT');
      const done = await first;
      expect(done.status).toBe(201);
      const replay = await post(path, ada, { name: 'Slow first' }, key);
      expect([replay.status, replay.headers.get('idempotent-replayed')]).toEqual([201, 'true']);
      expect(await replay.json()).toEqual(await done.json());
      expect(await worksNamed(tenant.id, 'Slow first')).toBe(1);
    } finally {
      await blocker.query('ROLLBACK').catch(() => undefined);
      await blocker.end();
    }
  });
});

describe('expiry and the key store', () => {
  it('runs the request again once the key has expired (24 hours)', async () => {
    const tenant = await createTenant(ada);
    const key = newKey();
    const path = `/v1/tenants/${tenant.id}/works`;
    expect((await post(path, ada, { name: 'Expiring' }, key)).status).toBe(201);
    await db().prisma.idempotencyKey.update({
      where: { scope_key: { scope: ada.id, key } },
      data: { expiresAt: new Date(Date.now() - 1000) },
    });
    const again = await post(path, ada, { name: 'Expiring' }, key);
    expect([again.status, again.headers.get('idempotent-replayed')]).toEqual([201, null]);
    expect(await worksNamed(tenant.id, 'Expiring')).toBe(2);
  });

  it('claims, completes, releases, and retakes abandoned or expired keys, each with a conditional write', async () => {
    const id = { scope: bob.id, key: newKey() };
    const now = new Date();
    const claim = await claimKey(db(), id, { request: 'POST /v1/tenants', bodyHash: 'a'.repeat(64), now });
    if (claim.kind !== 'claimed') throw new Error(claim.kind);
    expect((await claimKey(db(), id, { request: 'POST /v1/tenants', bodyHash: 'a'.repeat(64), now })).kind).toBe(
      'in_use',
    );
    expect(await claimKey(db(), id, { request: 'POST /v1/tenants', bodyHash: 'b'.repeat(64), now })).toMatchObject({
      kind: 'reused',
      sameRequest: true,
    });

    // A lock older than the timeout belongs to a dead request: the same request may take it over...
    const later = new Date(now.getTime() + IDEMPOTENCY_LOCK_TIMEOUT_MS + 1);
    expect(
      await claimKey(db(), id, { request: 'POST /v1/tenants', bodyHash: 'b'.repeat(64), now: later }),
    ).toMatchObject({
      kind: 'reused',
    });
    const retaken = await claimKey(db(), id, { request: 'POST /v1/tenants', bodyHash: 'a'.repeat(64), now: later });
    expect(retaken.kind).toBe('claimed');
    // ...and the dead request's late completion no longer lands.
    await completeIdempotencyKey(db(), id, claim.lockedAt, {
      status: 201,
      contentType: 'application/json',
      location: null,
      body: '{"late":true}',
    });
    expect((await claimKey(db(), id, { request: 'POST /v1/tenants', bodyHash: 'a'.repeat(64), now: later })).kind).toBe(
      'in_use',
    );

    // A 5xx gives the key back.
    if (retaken.kind !== 'claimed') throw new Error(retaken.kind);
    await releaseIdempotencyKey(db(), id, retaken.lockedAt);
    const fresh = await claimKey(db(), id, { request: 'POST /v1/tenants', bodyHash: 'a'.repeat(64), now: later });
    if (fresh.kind !== 'claimed') throw new Error(fresh.kind);
    await completeIdempotencyKey(db(), id, fresh.lockedAt, {
      status: 201,
      contentType: 'application/json',
      location: '/v1/x',
      body: '{}',
    });
    expect(await claimKey(db(), id, { request: 'POST /v1/tenants', bodyHash: 'a'.repeat(64), now: later })).toEqual({
      kind: 'done',
      recorded: {
        kind: 'response',
        response: { status: 201, contentType: 'application/json', location: '/v1/x', body: '{}' },
      },
    });
  });

  it('deletes expired keys in bounded batches and keeps live ones', async () => {
    const scope = `cleanup-${randomUUID()}`;
    const past = new Date(Date.now() - 60_000);
    const future = new Date(Date.now() + 60_000);
    const row = (key: string, expiresAt: Date) => ({
      scope,
      key,
      request: 'POST /v1/tenants',
      bodyHash: 'c'.repeat(64),
      lockedAt: past,
      expiresAt,
    });
    await db().prisma.idempotencyKey.createMany({
      data: [...['e1', 'e2', 'e3'].map((key) => row(key, past)), row('live', future)],
    });
    // Other test files share this database: count only what this test owns.
    const mine = () =>
      db().prisma.idempotencyKey.findMany({ where: { scope }, select: { key: true }, orderBy: { key: 'asc' } });
    while ((await deleteExpiredIdempotencyKeys(db(), new Date(), 2)) === 2) {
      // Keep going while full batches come back.
    }
    expect(await mine()).toEqual([{ key: 'live' }]);
  });
});

function bodyHash(body: unknown): string {
  return hash('sha256', canonicalJson(body), 'hex');
}
