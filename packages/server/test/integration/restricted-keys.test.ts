import { createTenant, createWork, freshEmail, ok } from '../support/fixtures';
import { expectProblem } from '../support/problems';
import { addMember, inviteEmail, type RoleFixture, tenantWithRoles } from '../support/roles';
import { ADMIN_TOKEN, startTestServer, type TestServer, type TestUser } from '../support/server';

/**
 * Restricted, expiring API keys (issue 40): what a key may be limited by, what each limit answers, that a key never
 * does more than its user and loses power with them, and every rule of the creation's input.
 */
let server: TestServer;
let roles: RoleFixture;
/** A second tenant the owner belongs to. */
let other: { id: string };

beforeAll(async () => {
  server = await startTestServer();
  roles = await tenantWithRoles(server);
  other = await createTenant(roles.owner, 'Other Inc');
});
afterAll(() => server.close());

type Restrictions = { tenants?: string[]; scopes?: string[]; expiresAt?: string };

/** A new key of `user`'s with `restrictions`: its secret and id (fails the test when refused). */
async function keyOf(user: TestUser, restrictions: Restrictions, name = 'Restricted') {
  const res = await server.callAs(user.apiKey, 'POST', '/v1/api-keys', { name, ...restrictions });
  if (res.status !== 201) throw new Error(`key refused: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.apiKey;
}

const iso = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const inDays = (days: number, from = Date.now()) => new Date(from + days * 86_400_000).toISOString();

describe('creating a restricted key', () => {
  it('shows its tenants, scopes and expiry in the creation and in the list; an unrestricted key shows null', async () => {
    const expiresAt = inDays(30);
    const key = await keyOf(roles.owner, {
      tenants: [roles.tenant.id],
      scopes: ['works:read', 'requests:act'],
      expiresAt,
    });
    expect(key).toMatchObject({
      tenants: [roles.tenant.id],
      scopes: ['works:read', 'requests:act'],
      expiresAt,
      lastUsedAt: null,
      revokedAt: null,
    });
    const listed = await server.callAs(roles.owner, 'GET', '/v1/api-keys?limit=100');
    const node = listed.body.apiKeys.edges.find((edge) => edge.node.id === key.id)!.node;
    const { secret: _secret, ...withoutSecret } = key;
    expect(node).toEqual(withoutSecret);

    const plain = await keyOf(roles.owner, {});
    expect(plain).toMatchObject({ tenants: null, scopes: null, expiresAt: null });
  });

  it('keeps the operator flow: POST /admin/users makes a user with an unrestricted key', async () => {
    const created = await server.callAs(ADMIN_TOKEN, 'POST', '/v1/admin/users', {
      email: freshEmail('operator-made'),
      firstName: 'Op',
      lastName: 'Made',
    });
    expect(created.status).toBe(201);
    expect(created.body.apiKey).toMatchObject({ tenants: null, scopes: null, expiresAt: null });
    expect((await server.callAs(created.body.apiKey.secret, 'POST', '/v1/api-keys', { name: 'More' })).status).toBe(
      201,
    );
  });

  it('takes an expiry up to a year (366 days) ahead, with an offset, stored as the instant', async () => {
    const key = await keyOf(roles.owner, { expiresAt: inDays(365.99) });
    expect(key.expiresAt).toMatch(iso);
    const day = inDays(200).slice(0, 10);
    const withOffset = await keyOf(roles.owner, { expiresAt: `${day}T00:00:00+02:00` });
    expect(withOffset.expiresAt).toBe(new Date(`${day}T00:00:00+02:00`).toISOString());
  });
});

describe('bad input: each rule a 400 naming what is wrong', () => {
  const refused = async (body: Record<string, unknown>, path: string, user: TestUser = roles.owner) => {
    const res = await server.call('/v1/api-keys', {
      method: 'POST',
      apiKey: user.apiKey,
      json: { name: 'Bad', ...body },
    });
    const problem = await expectProblem(res, 400, 'validation_failed', path);
    return problem.errors!.map((error) => error.message).join('\n');
  };

  it('a tenant the user is not a member of (or that does not exist) is named', async () => {
    const strangers = await createTenant(roles.stranger, 'Not yours');
    const nowhere = '0193a1b2-7c3d-7e4f-8a9b-0c1d2e3f4a5b';
    const message = await refused({ tenants: [roles.tenant.id, strangers.id, nowhere] }, '/body/tenants');
    expect(message).toContain(strangers.id);
    expect(message).toContain(nowhere);
    expect(message).not.toContain(roles.tenant.id);
  });

  it("a scope the user's role does not allow in the key's tenants is named", async () => {
    // A member may not manage webhooks or rename the tenant.
    const message = await refused(
      { tenants: [roles.tenant.id], scopes: ['works:read', 'webhooks:write', 'tenants:write'] },
      '/body/scopes',
      roles.member,
    );
    expect(message).toContain('webhooks:write');
    expect(message).toContain('tenants:write');
    expect(message).not.toContain('works:read');
    // The same member without tenants: no tenant of theirs lets them either.
    expect(await refused({ scopes: ['webhooks:read'] }, '/body/scopes', roles.member)).toContain('webhooks:read');
    // A user with no tenant at all may ask only for what needs none (or for tenants:create, and then anything).
    const loner = await server.createUser('loner');
    expect(await refused({ scopes: ['works:read'] }, '/body/scopes', loner)).toContain('works:read');
    expect((await keyOf(loner, { scopes: ['account:read'] })).scopes).toEqual(['account:read']);
    expect((await keyOf(loner, { scopes: ['tenants:create', 'webhooks:write'] })).scopes).toEqual([
      'tenants:create',
      'webhooks:write',
    ]);
  });

  it('account:manage never, tenants:create not with tenants', async () => {
    expect(await refused({ scopes: ['account:manage'] }, '/body/scopes')).toContain('account:manage');
    expect(await refused({ tenants: [roles.tenant.id], scopes: ['tenants:create'] }, '/body/scopes')).toContain(
      'tenants:create',
    );
  });

  it('expiresAt in the past, now, beyond 366 days, or not a real date', async () => {
    expect(await refused({ expiresAt: inDays(-1) }, '/body/expiresAt')).toContain('must be in the future');
    expect(await refused({ expiresAt: new Date(Date.now() - 1000).toISOString() }, '/body/expiresAt')).toContain(
      'future',
    );
    expect(await refused({ expiresAt: inDays(366.01) }, '/body/expiresAt')).toContain('366 days');
    // 30 February of some coming year: never a real date.
    await refused({ expiresAt: `${inDays(30).slice(0, 5)}02-30T00:00:00Z` }, '/body/expiresAt');
  });

  it.each([
    ['an empty tenants list', { tenants: [] }, '/body/tenants'],
    ['an empty scopes list', { scopes: [] }, '/body/scopes'],
    ['an unknown scope', { scopes: ['works:delete'] }, '/body/scopes/0'],
    ['a repeated scope', { scopes: ['works:read', 'works:read'] }, '/body/scopes'],
    [
      'a repeated tenant',
      { tenants: ['0193a1b2-7c3d-7e4f-8a9b-0c1d2e3f4a5b', '0193a1b2-7c3d-7e4f-8a9b-0c1d2e3f4a5b'] },
      '/body/tenants',
    ],
    ['a tenant that is not an id', { tenants: ['acme'] }, '/body/tenants/0'],
    [
      '101 tenants',
      { tenants: Array.from({ length: 101 }, (_, i) => `0193a1b2-7c3d-7e4f-8a9b-${String(i).padStart(12, '0')}`) },
      '/body/tenants',
    ],
    ['21 scopes', { scopes: Array.from({ length: 21 }, () => 'works:read') }, '/body/scopes'],
  ])('%s', async (_what, body, path) => {
    await refused(body, path);
  });

  it('stores nothing for a refused key', async () => {
    const before = await server.database.prisma.apiKey.count({ where: { userId: roles.owner.id } });
    await refused({ scopes: ['account:manage'] }, '/body/scopes');
    expect(await server.database.prisma.apiKey.count({ where: { userId: roles.owner.id } })).toBe(before);
  });
});

describe('a key limited to some tenants', () => {
  it('sees any other tenant as not found, exactly as a non-member does', async () => {
    const key = await keyOf(roles.owner, { tenants: [other.id] });
    const asKey = await server.call(`/v1/tenants/${roles.tenant.id}`, { apiKey: key.secret });
    const asStranger = await server.call(`/v1/tenants/${roles.tenant.id}`, { apiKey: roles.stranger.apiKey });
    expect(asKey.status).toBe(404);
    const [keyBody, strangerBody] = [await asKey.json(), await asStranger.json()];
    expect(keyBody).toEqual(strangerBody);
    // Inside: works, requests, members, webhooks, events all 404.
    for (const path of ['works', 'requests', 'members', 'webhook-endpoints', 'events', 'invitations'])
      expect((await server.call(`/v1/tenants/${roles.tenant.id}/${path}`, { apiKey: key.secret })).status).toBe(404);
    const write = await server.callAs(key.secret, 'POST', `/v1/tenants/${roles.tenant.id}/works`, { name: 'No' });
    expect(write.status).toBe(404);
    // Its own tenant works.
    expect((await server.call(`/v1/tenants/${other.id}`, { apiKey: key.secret })).status).toBe(200);
  });

  it('lists only its tenants, with their count', async () => {
    const key = await keyOf(roles.owner, { tenants: [other.id] });
    const { body } = await server.callAs(key.secret, 'GET', '/v1/tenants');
    expect(body.tenants.totalCount).toBe(1);
    expect(body.tenants.edges.map((edge) => edge.node.id)).toEqual([other.id]);
    const all = await server.callAs(roles.owner, 'GET', '/v1/tenants');
    expect(all.body.tenants.totalCount).toBe(2);
  });

  it('cannot create tenants (it could not reach them): 403 insufficient_scope tenants:create', async () => {
    const key = await keyOf(roles.owner, { tenants: [other.id] });
    const res = await server.call('/v1/tenants', { method: 'POST', apiKey: key.secret, json: { name: 'New' } });
    expect((await expectProblem(res, 403, 'insufficient_scope')).scope).toBe('tenants:create');
  });

  it('cannot replay, in another tenant, a creation its user made there with another key', async () => {
    const key = await keyOf(roles.owner, { tenants: [other.id] });
    const headers = { 'Idempotency-Key': `replay-${Date.now()}` };
    const first = await server.callAs(
      roles.owner,
      'POST',
      `/v1/tenants/${roles.tenant.id}/works`,
      { name: 'Once' },
      headers,
    );
    expect(first.status).toBe(201);
    const replay = await server.callAs(
      key.secret,
      'POST',
      `/v1/tenants/${roles.tenant.id}/works`,
      { name: 'Once' },
      headers,
    );
    expect([replay.status, replay.headers.get('idempotent-replayed')]).toEqual([404, null]);
  });
});

describe('a key missing a scope', () => {
  it('gets 403 insufficient_scope naming the scope, in the body and in WWW-Authenticate (RFC 6750)', async () => {
    const key = await keyOf(roles.owner, { scopes: ['works:read'] });
    expect((await server.call(`/v1/tenants/${roles.tenant.id}/works`, { apiKey: key.secret })).status).toBe(200);
    const res = await server.call(`/v1/tenants/${roles.tenant.id}/works`, {
      method: 'POST',
      apiKey: key.secret,
      json: { name: 'Refused' },
    });
    expect(res.headers.get('www-authenticate')).toBe('Bearer error="insufficient_scope", scope="works:write"');
    const problem = await expectProblem(res, 403, 'insufficient_scope');
    expect(problem).toMatchObject({ scope: 'works:write', detail: expect.stringContaining('works:write') });
    // Nothing was made.
    const works = await server.callAs(roles.owner, 'GET', `/v1/tenants/${roles.tenant.id}/works?q=Refused`);
    expect(works.body.works.edges).toEqual([]);
  });

  it('is refused before its body is read: a bad body still gets the 403', async () => {
    const key = await keyOf(roles.owner, { scopes: ['works:read'] });
    const res = await server.call(`/v1/tenants/${roles.tenant.id}/works`, {
      method: 'POST',
      apiKey: key.secret,
      json: { unknown: true },
    });
    expect(res.status).toBe(403);
  });

  it('never manages keys or invitations when restricted, whatever it lists', async () => {
    const key = await keyOf(roles.owner, { tenants: [roles.tenant.id, other.id] });
    const spare = await keyOf(roles.owner, {}, 'Spare');
    const invitedTo = await createTenant(roles.stranger, 'Inviting');
    const invitation = await inviteEmail(roles.stranger, invitedTo.id, roles.owner.email, 'member');
    for (const [method, path] of [
      ['GET', '/v1/api-keys'],
      ['POST', '/v1/api-keys'],
      ['DELETE', `/v1/api-keys/${spare.id}`],
      ['GET', '/v1/me/invitations'],
      ['POST', `/v1/me/invitations/${invitation.id}/accept`],
      ['POST', `/v1/me/invitations/${invitation.id}/decline`],
    ] as const) {
      const res = await server.call(path, {
        method,
        apiKey: key.secret,
        json: method === 'POST' && path === '/v1/api-keys' ? { name: 'x' } : undefined,
      });
      expect({ path, ...(await expectProblem(res, 403, 'insufficient_scope')) }).toMatchObject({
        path,
        scope: 'account:manage',
      });
    }
    // The spare key and the invitation are untouched.
    expect((await server.callAs(spare.secret, 'GET', '/v1/me')).status).toBe(200);
    const mine = await server.callAs(roles.owner, 'GET', '/v1/me/invitations');
    expect(mine.body.invitations.edges.map((edge) => edge.node.id)).toContain(invitation.id);
  });

  it('an expiring but otherwise unrestricted key keeps full power (it may manage keys)', async () => {
    const key = await keyOf(roles.owner, { expiresAt: inDays(1) });
    expect((await server.callAs(key.secret, 'GET', '/v1/api-keys')).status).toBe(200);
  });
});

describe("a key's power is its user's, now", () => {
  it('is never more than the role: a member with works:write still cannot discard (403 forbidden)', async () => {
    const work = await createWork(roles.owner, roles.tenant.id, 'Kept');
    const key = await keyOf(roles.member, { tenants: [roles.tenant.id], scopes: ['works:write', 'works:read'] });
    const res = await server.call(`/v1/tenants/${roles.tenant.id}/works/${work.id}`, {
      method: 'DELETE',
      apiKey: key.secret,
    });
    await expectProblem(res, 403, 'forbidden');
    expect(res.headers.get('www-authenticate')).toBeNull();
  });

  it('is lowered at once when the role is, and gone when the membership is', async () => {
    const user = await server.createUser('demoted');
    await addMember(roles.owner, roles.tenant.id, user, 'admin');
    const key = await keyOf(user, { tenants: [roles.tenant.id], scopes: ['tenants:write', 'tenants:read'] });
    const rename = () =>
      server.call(`/v1/tenants/${roles.tenant.id}`, {
        method: 'PATCH',
        apiKey: key.secret,
        json: { name: 'Roles Inc' },
      });
    expect((await rename()).status).toBe(200);

    ok(
      await roles.owner.client.PATCH('/tenants/{tenant_id}/members/{user_id}', {
        params: { path: { tenant_id: roles.tenant.id, user_id: user.id } },
        body: { role: 'member' },
      }),
    );
    await expectProblem(await rename(), 403, 'forbidden');
    expect((await server.call(`/v1/tenants/${roles.tenant.id}`, { apiKey: key.secret })).status).toBe(200);

    const removed = await roles.owner.client.DELETE('/tenants/{tenant_id}/members/{user_id}', {
      params: { path: { tenant_id: roles.tenant.id, user_id: user.id } },
    });
    expect(removed.response.status).toBe(204);
    await expectProblem(await server.call(`/v1/tenants/${roles.tenant.id}`, { apiKey: key.secret }), 404, 'not_found');
  });
});

describe('expiry and last use', () => {
  it('an expired key is 401 like a revoked one, with WWW-Authenticate', async () => {
    const key = await keyOf(roles.owner, { expiresAt: inDays(1) });
    expect((await server.callAs(key.secret, 'GET', '/v1/me')).status).toBe(200);
    // Time passes: the stored expiry is moved into the past rather than waited for.
    await server.database.prisma.apiKey.update({
      where: { id: key.id },
      data: { expiresAt: new Date(Date.now() - 1) },
    });
    const res = await server.call('/v1/me', { apiKey: key.secret });
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer\b/);
    const problem = await expectProblem(res, 401, 'unauthenticated');
    expect(problem.detail).toContain('expired');
  });

  it('lastUsedAt is kept to the minute and written at most once a minute, not once a request', async () => {
    const key = await keyOf(roles.owner, { scopes: ['account:read'] });
    const rowVersion = async () =>
      (
        await server.database.prisma.$queryRawUnsafe<Array<{ version: string; lastUsedAt: Date | null }>>(
          'SELECT xmin::text AS version, last_used_at AS "lastUsedAt" FROM api_keys WHERE id = $1::uuid',
          key.id,
        )
      )[0]!;
    expect((await rowVersion()).lastUsedAt).toBeNull();
    expect((await server.callAs(key.secret, 'GET', '/v1/me')).status).toBe(200);
    const first = await rowVersion();
    expect(first.lastUsedAt!.getTime() % 60_000).toBe(0);
    expect(Date.now() - first.lastUsedAt!.getTime()).toBeLessThan(120_000);
    // Within the same minute (the stored minute is moved forward, so that a minute boundary cannot interfere),
    // requests write nothing: the row version stays.
    const ahead = new Date(Math.floor(Date.now() / 60_000) * 60_000 + 60_000);
    await server.database.prisma.apiKey.update({ where: { id: key.id }, data: { lastUsedAt: ahead } });
    const pinned = await rowVersion();
    for (let i = 0; i < 5; i++) expect((await server.callAs(key.secret, 'GET', '/v1/me')).status).toBe(200);
    expect(await rowVersion()).toEqual(pinned);
    // A stored minute in the past is brought forward by the next request.
    await server.database.prisma.apiKey.update({
      where: { id: key.id },
      data: { lastUsedAt: new Date(Date.now() - 3_600_000) },
    });
    await server.callAs(key.secret, 'GET', '/v1/me');
    expect(Date.now() - (await rowVersion()).lastUsedAt!.getTime()).toBeLessThan(120_000);
  });
});
