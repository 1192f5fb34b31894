import { freshEmail } from '../support/fixtures';
import { ADMIN_TOKEN, type CallResult, startTestServer, type TestServer, type TestUser } from '../support/server';

/** GET /me; API keys: create (secret once), list, revoke (401 at once), lastUsedAt; the operator route. */
let server: TestServer;
let ada: TestUser;

beforeAll(async () => {
  server = await startTestServer();
  ada = await server.createUser('ada');
});
afterAll(() => server.close());

const iso = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

async function expectUnauthenticated(response: Promise<CallResult<{ code?: string }>>) {
  const { status, body, headers } = await response;
  expect([status, body.code]).toEqual([401, 'unauthenticated']);
  expect(headers.get('www-authenticate')).toMatch(/^Bearer\b/);
  expect(headers.get('content-type')).toMatch(/^application\/problem\+json/);
}

describe('GET /me', () => {
  it('returns the user the key belongs to', async () => {
    const { status, body } = await server.callAs(ada.apiKey, 'GET', '/v1/me');
    expect(status).toBe(200);
    expect(body).toEqual({
      user: {
        id: ada.id,
        firstName: 'ada',
        lastName: 'Tester',
        email: ada.email,
        createdAt: expect.stringMatching(iso),
      },
    });
  });
});

describe('API keys', () => {
  it('shows the secret once, at creation, and never in the list', async () => {
    const created = await server.callAs(ada.apiKey, 'POST', '/v1/api-keys', { name: '  CI key  ' });
    expect(created.status).toBe(201);
    const { apiKey } = created.body;
    expect(created.headers.get('location')).toBe(`/v1/api-keys/${apiKey.id}`);
    expect(apiKey).toEqual({
      id: expect.any(String),
      name: 'CI key',
      prefix: expect.stringMatching(/^wk_[a-z0-9]{10}$/),
      createdAt: expect.stringMatching(iso),
      lastUsedAt: null,
      revokedAt: null,
      tenants: null,
      scopes: null,
      expiresAt: null,
      secret: expect.any(String),
    });
    expect(apiKey.secret.startsWith(`${apiKey.prefix}_`)).toBe(true);
    // At least 128 random bits: 43 base64url characters carry 256.
    expect(apiKey.secret.length - apiKey.prefix.length - 1).toBeGreaterThanOrEqual(22);

    const listed = await server.callAs(ada.apiKey, 'GET', '/v1/api-keys');
    const node = listed.body.apiKeys.edges.find((edge: { node: { id: string } }) => edge.node.id === apiKey.id)!.node;
    const { secret: _secret, ...withoutSecret } = apiKey;
    expect(node).toEqual(withoutSecret);
    expect(JSON.stringify(listed.body)).not.toContain(apiKey.secret.slice(apiKey.prefix.length));
    // The database keeps only a hash.
    const row = await server.database.prisma.apiKey.findUniqueOrThrow({ where: { id: apiKey.id } });
    expect(JSON.stringify(row)).not.toContain(apiKey.secret.slice(apiKey.prefix.length + 1));
  });

  it('works at once, and records lastUsedAt when used', async () => {
    const { apiKey } = (await server.callAs(ada.apiKey, 'POST', '/v1/api-keys', { name: 'Fresh' })).body;
    const before = Date.now();
    const me = await server.callAs(apiKey.secret, 'GET', '/v1/me');
    expect(me.body.user.id).toBe(ada.id);

    const listed = await server.callAs(ada.apiKey, 'GET', '/v1/api-keys?limit=100');
    const node = listed.body.apiKeys.edges.find((edge: { node: { id: string } }) => edge.node.id === apiKey.id)!.node;
    expect(node.lastUsedAt).toMatch(iso);
    // Kept to the minute: the minute of the call.
    expect(node.lastUsedAt).toMatch(/:00\.000Z$/);
    expect(Date.parse(node.lastUsedAt!)).toBeGreaterThanOrEqual(Math.floor(before / 60_000) * 60_000);
    expect(Date.parse(node.lastUsedAt!)).toBeLessThanOrEqual(Date.now());
  });

  it('lists only my keys, revoked ones included, newest first', async () => {
    const bob = await server.createUser('bob');
    const second = (await server.callAs(bob.apiKey, 'POST', '/v1/api-keys', { name: 'Second' })).body.apiKey;
    await server.callAs(bob.apiKey, 'DELETE', `/v1/api-keys/${second.id}`);
    const { body } = await server.callAs(bob.apiKey, 'GET', '/v1/api-keys');
    expect(body.apiKeys.totalCount).toBe(2);
    expect(body.apiKeys.edges.map((edge: { node: { name: string } }) => edge.node.name)).toEqual([
      'Second',
      'Default key',
    ]);
    expect(body.apiKeys.edges[0]!.node.revokedAt).toMatch(iso);
    expect(body.apiKeys.edges[1]!.node.revokedAt).toBeNull();
  });

  it('revoked: 200 with revokedAt, then 401 at once; revoking again changes nothing', async () => {
    const { apiKey } = (await server.callAs(ada.apiKey, 'POST', '/v1/api-keys', { name: 'Short-lived' })).body;
    expect((await server.callAs(apiKey.secret, 'GET', '/v1/me')).status).toBe(200);

    const revoked = await server.callAs(ada.apiKey, 'DELETE', `/v1/api-keys/${apiKey.id}`);
    expect(revoked.status).toBe(200);
    expect(revoked.body.apiKey).toMatchObject({
      id: apiKey.id,
      name: 'Short-lived',
      revokedAt: expect.stringMatching(iso),
    });
    expect(revoked.body.apiKey).not.toHaveProperty('secret');

    await expectUnauthenticated(server.callAs(apiKey.secret, 'GET', '/v1/me'));
    await expectUnauthenticated(server.callAs(apiKey.secret, 'GET', '/v1/tenants'));
    await expectUnauthenticated(server.callAs(apiKey.secret, 'POST', '/v1/tenants', { name: 'Nope' }));

    const again = await server.callAs(ada.apiKey, 'DELETE', `/v1/api-keys/${apiKey.id}`);
    expect(again.body.apiKey).toEqual(revoked.body.apiKey);
  });

  it('may revoke the key the caller is using; the next call with it fails', async () => {
    const { apiKey } = (await server.callAs(ada.apiKey, 'POST', '/v1/api-keys', { name: 'Self-revoking' })).body;
    const revoked = await server.callAs(apiKey.secret, 'DELETE', `/v1/api-keys/${apiKey.id}`);
    expect(revoked.status).toBe(200);
    await expectUnauthenticated(server.callAs(apiKey.secret, 'GET', '/v1/api-keys'));
    // The user's other keys are untouched.
    expect((await server.callAs(ada.apiKey, 'GET', '/v1/me')).status).toBe(200);
  });

  it('answers 404 for another user’s key, which stays usable', async () => {
    const bob = await server.createUser('bob');
    const bobKey = (await server.callAs(bob.apiKey, 'GET', '/v1/api-keys')).body.apiKeys.edges[0]!.node;
    const res = await server.callAs(ada.apiKey, 'DELETE', `/v1/api-keys/${bobKey.id}`);
    expect([res.status, res.body.code]).toEqual([404, 'not_found']);
    expect((await server.callAs(bob.apiKey, 'GET', '/v1/me')).status).toBe(200);
  });
});

describe('authentication', () => {
  it.each([
    ['no header', undefined],
    ['an empty bearer', 'Bearer '],
    ['another scheme', `Basic ${Buffer.from('ada:pw').toString('base64')}`],
    ['a malformed key', 'Bearer not-a-key'],
    ['an unknown well-formed key', `Bearer wk_abcdefghij_${'A'.repeat(43)}`],
  ])('answers 401 with WWW-Authenticate for %s', async (_what, authorization) => {
    await expectUnauthenticated(
      server.callAs(undefined, 'GET', '/v1/me', undefined, authorization ? { Authorization: authorization } : {}),
    );
  });

  it('answers 401 for a real prefix with a wrong secret', async () => {
    const prefix = ada.apiKey.slice(0, 'wk_'.length + 10);
    const forged = `${prefix}_${'B'.repeat(43)}`;
    expect(forged).not.toBe(ada.apiKey);
    await expectUnauthenticated(server.callAs(forged, 'GET', '/v1/me'));
  });

  it('checks the key before the body: a bad body from a caller without a key is still 401', async () => {
    await expectUnauthenticated(server.callAs(undefined, 'POST', '/v1/tenants', { unknown: true }));
  });
});

describe('POST /admin/users (operator)', () => {
  it('creates a user and their first key, shown once', async () => {
    const email = freshEmail('operator');
    const created = await server.callAs(ADMIN_TOKEN, 'POST', '/v1/admin/users', {
      email,
      firstName: ' Grace ',
      lastName: 'Hopper',
    });
    expect(created.status).toBe(201);
    expect(created.body.user).toEqual({
      id: expect.any(String),
      firstName: 'Grace',
      lastName: 'Hopper',
      email,
      createdAt: expect.stringMatching(iso),
    });
    expect(created.body.apiKey).toMatchObject({ name: 'Default key', revokedAt: null, secret: expect.any(String) });
    expect((await server.callAs(created.body.apiKey.secret, 'GET', '/v1/me')).body.user.id).toBe(created.body.user.id);

    const again = await server.callAs(ADMIN_TOKEN, 'POST', '/v1/admin/users', {
      email: email.toUpperCase(),
      firstName: 'G',
      lastName: 'H',
    });
    expect([again.status, again.body.code]).toEqual([409, 'email_taken']);
  });

  it('refuses a wrong token with 401, and any API key', async () => {
    const body = { email: 'x@example.com', firstName: 'X', lastName: 'Y' };
    await expectUnauthenticated(server.callAs(`${ADMIN_TOKEN}x`, 'POST', '/v1/admin/users', body));
    await expectUnauthenticated(server.callAs(ada.apiKey, 'POST', '/v1/admin/users', body));
  });

  it('does not exist (404) on a server started without ADMIN_TOKEN', async () => {
    const bare = await startTestServer({ adminToken: null });
    try {
      const res = await bare.call('/v1/admin/users', {
        method: 'POST',
        headers: { Authorization: `Bearer ${ADMIN_TOKEN}` },
        json: { email: 'x@example.com', firstName: 'X', lastName: 'Y' },
      });
      expect(res.status).toBe(404);
      expect((await res.json()).code).toBe('not_found');
    } finally {
      await bare.close();
    }
  });
});
