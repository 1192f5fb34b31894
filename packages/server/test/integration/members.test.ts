import { Client } from 'pg';
import { createTenant } from '../support/fixtures';
import { addMember, addNewMember, type RoleFixture, tenantWithRoles } from '../support/roles';
import { startTestServer, type TestServer, type TestUser } from '../support/server';

/** Members: list, add by email, change role, remove; only owners touch the owner role; a tenant keeps an owner. */
let server: TestServer;
let roles: RoleFixture;

beforeAll(async () => {
  server = await startTestServer();
  roles = await tenantWithRoles(server, 'Members Inc');
});
afterAll(() => server.close());

const iso = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

const membersUrl = (tenantId = roles.tenant.id) => `/v1/tenants/${tenantId}/members` as const;
const memberUrl = (userId: string, tenantId = roles.tenant.id) => `${membersUrl(tenantId)}/${userId}` as const;

const add = (by: TestUser, email: string, role: string, extra: object = {}, tenantId = roles.tenant.id) =>
  server.callAs(by, 'POST', membersUrl(tenantId), { email, role, ...extra });
const setRole = (by: TestUser, userId: string, role: string, tenantId = roles.tenant.id) =>
  server.callAs(by, 'PATCH', memberUrl(userId, tenantId), { role });
const remove = (by: TestUser, userId: string, tenantId = roles.tenant.id) =>
  server.callAs(by, 'DELETE', memberUrl(userId, tenantId));

async function roleOf(userId: string, tenantId = roles.tenant.id): Promise<string | undefined> {
  const { body } = await server.callAs(roles.owner, 'GET', `${membersUrl(tenantId)}?limit=100`);
  return body.members.edges.find((edge: { node: { user: { id: string } } }) => edge.node.user.id === userId)?.node.role;
}

describe('GET /tenants/{id}/members', () => {
  it('lists every member with their role and user (not when their account was created), the owner included', async () => {
    const { status, body } = await server.callAs(roles.member, 'GET', membersUrl());
    expect(status).toBe(200);
    const nodes = body.members.edges.map((edge) => edge.node);
    expect(body.members.totalCount).toBe(3);
    expect(nodes).toEqual(
      expect.arrayContaining([
        {
          role: 'owner',
          user: { id: roles.owner.id, firstName: 'owner', lastName: 'Tester', email: roles.owner.email },
          createdAt: expect.stringMatching(iso),
        },
        expect.objectContaining({ role: 'admin', user: expect.objectContaining({ id: roles.admin.id }) }),
        expect.objectContaining({ role: 'member', user: expect.objectContaining({ id: roles.member.id }) }),
      ]),
    );
    // Newest first: the owner joined first, so comes last.
    expect(nodes.at(-1)!.role).toBe('owner');
  });
});

describe('GET /tenants/{id}/members/{user_id}', () => {
  const STRONG_TAG = /^"[A-Za-z0-9_-]{27}"$/;
  const read = <Url extends string>(by: TestUser, url: Url, headers: Record<string, string> = {}) =>
    server.call(url, { apiKey: by.apiKey, headers });
  const patch = (by: TestUser, userId: string, role: string, headers: Record<string, string>) =>
    server.call(memberUrl(userId), { method: 'PATCH', apiKey: by.apiKey, json: { role }, headers });

  it('returns the member as the list shows it, to every role, with a strong ETag (the one of its creation)', async () => {
    const user = await server.createUser('read');
    const created = await server.call(membersUrl(), {
      method: 'POST',
      apiKey: roles.admin.apiKey,
      json: { email: user.email, role: 'member' },
    });
    expect(created.status).toBe(201);
    const { member } = await created.json();
    // The Location of the creation is this operation's URL, and its ETag this read's.
    expect(created.headers.get('location')).toBe(memberUrl(member!.user.id));
    for (const by of [roles.owner, roles.admin, roles.member]) {
      const res = await read(by, created.headers.get('location')!);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ member });
      expect(res.headers.get('etag')).toMatch(STRONG_TAG);
      expect(res.headers.get('etag')).toBe(created.headers.get('etag'));
    }
    const { body } = await server.callAs(roles.member, 'GET', `${membersUrl()}?limit=100`);
    expect(body.members.edges.map((edge: { node: unknown }) => edge.node)).toContainEqual(member);
  });

  it('answers 304 to If-None-Match while the member is unchanged, 200 with a new tag once the role changed', async () => {
    const target = (await addNewMember(server, roles.owner, roles.tenant.id, 'member')).user.id;
    const tag = (await read(roles.member, memberUrl(target))).headers.get('etag')!;
    const cached = await read(roles.member, memberUrl(target), { 'If-None-Match': tag });
    expect(cached.status).toBe(304);
    expect(cached.headers.get('etag')).toBe(tag);
    expect(await cached.text()).toBe('');
    expect((await read(roles.member, memberUrl(target), { 'If-None-Match': '"other"' })).status).toBe(200);

    expect((await setRole(roles.admin, target, 'admin')).status).toBe(200);
    const changed = await read(roles.member, memberUrl(target), { 'If-None-Match': tag });
    expect(changed.status).toBe(200);
    expect(changed.headers.get('etag')).not.toBe(tag);
    expect((await changed.json()).member.role).toBe('admin');
  });

  it('gives the ETag updateMember checks: it works as If-Match, and a stale one is 412 with nothing changed', async () => {
    const target = (await addNewMember(server, roles.owner, roles.tenant.id, 'member')).user.id;
    const tag = (await read(roles.admin, memberUrl(target))).headers.get('etag')!;

    const promoted = await patch(roles.admin, target, 'admin', { 'If-Match': tag });
    expect(promoted.status).toBe(200);
    const newTag = promoted.headers.get('etag');
    expect(newTag).not.toBe(tag);
    // What the PATCH answered is what a read now gives, tag included.
    const after = await read(roles.admin, memberUrl(target));
    expect(after.headers.get('etag')).toBe(newTag);
    expect((await after.json()).member).toEqual((await promoted.json()).member);

    // The tag read before the change is stale now: refused, the role stays.
    const stale = await patch(roles.owner, target, 'member', { 'If-Match': tag });
    expect(stale.status).toBe(412);
    expect(stale.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await stale.json()).toMatchObject({ status: 412, code: 'precondition_failed' });
    expect(await roleOf(target)).toBe('admin');
    expect((await patch(roles.owner, target, 'member', { 'If-Match': newTag! })).status).toBe(200);
  });

  it('answers 404 for an unknown user, a user who is not a member and a removed member', async () => {
    const removed = await server.createUser('removed');
    await addMember(roles.owner, roles.tenant.id, removed.email, 'member');
    expect((await remove(roles.owner, removed.id)).status).toBe(204);
    const unknown = '0193a1b1-1b2c-7d3e-9f40-5b6c7d8e9fa0';
    for (const userId of [unknown, roles.stranger.id, removed.id, 'not-an-id']) {
      const { status, body } = await server.callAs(roles.member, 'GET', memberUrl(userId));
      expect([userId, status, body.code, body.detail]).toEqual([userId, 404, 'not_found', 'No member with this id.']);
    }
    // An id with characters no id has breaks the contract (400), as on every path.
    const { status, body } = await server.callAs(roles.member, 'GET', memberUrl('a.b'));
    expect([status, body.code]).toEqual([400, 'validation_failed']);
  });

  it('answers 404 to outsiders, members or not, exactly as for a tenant that does not exist', async () => {
    const answers = await Promise.all([
      server.callAs(roles.stranger, 'GET', memberUrl(roles.member.id)),
      server.callAs(roles.stranger, 'GET', memberUrl(roles.stranger.id)),
      server.callAs(roles.stranger, 'GET', memberUrl(roles.member.id, '0193a1b2-7c3d-7e4f-8a9b-0c1d2e3f4a5b')),
    ]);
    for (const { status, body, headers } of answers) {
      expect([status, body.code, body.detail]).toEqual([404, 'not_found', 'No tenant with this id.']);
      expect(headers.get('etag')).toBeNull();
    }
  });
});

describe('POST /tenants/{id}/members', () => {
  it('adds an existing user by email (any case), keeping their names, with a Location', async () => {
    const user = await server.createUser('existing');
    const { status, body, headers } = await add(roles.admin, user.email.toUpperCase(), 'member', {
      firstName: 'Ignored',
    });
    expect(status).toBe(201);
    expect(headers.get('location')).toBe(memberUrl(user.id));
    // Only what the tenant needs: not when the user's account was created (issue 23).
    expect(body).toEqual({
      member: {
        role: 'member',
        user: { id: user.id, firstName: 'existing', lastName: 'Tester', email: user.email },
        createdAt: expect.stringMatching(iso),
      },
    });
    // The new member now sees the tenant.
    expect((await server.callAs(user, 'GET', `/v1/tenants/${roles.tenant.id}`)).status).toBe(200);
  });

  it('reuses the one user record in every tenant they are added to', async () => {
    const user = await server.createUser('shared');
    const here = await add(roles.owner, user.email, 'admin');
    const other = await createTenant(roles.admin, 'Elsewhere');
    const there = await add(roles.admin, user.email.toUpperCase(), 'member', {}, other.id);
    expect([here.status, there.status]).toEqual([201, 201]);
    expect(there.body.member!.user.id).toBe(here.body.member!.user.id);
  });

  it('answers 409 already_member for someone who already is one', async () => {
    const { status, body } = await add(roles.owner, roles.member.email, 'admin');
    expect(status).toBe(409);
    expect(body.code).toBe('already_member');
    expect(await roleOf(roles.member.id)).toBe('member');
  });

  it('shows the new member in the tenant’s members.nodes', async () => {
    const user = await server.createUser('shown');
    await add(roles.owner, user.email, 'member');
    const { body } = await server.callAs(roles.member, 'GET', `/v1/tenants/${roles.tenant.id}`);
    expect(body.tenant.members.nodes).toContainEqual({
      role: 'member',
      user: { firstName: 'shown', lastName: 'Tester', email: user.email },
    });
    expect(body.tenant.members.nodes).toContainEqual({
      role: 'owner',
      user: { firstName: 'owner', lastName: 'Tester', email: roles.owner.email },
    });
  });

  it('lets only an owner add an owner', async () => {
    const user = await server.createUser('co-owner');
    const byAdmin = await add(roles.admin, user.email, 'owner');
    expect(byAdmin.status).toBe(403);
    expect(byAdmin.body.code).toBe('forbidden');
    const byOwner = await add(roles.owner, user.email, 'owner');
    expect(byOwner.status).toBe(201);
    expect(byOwner.body.member!.role).toBe('owner');
  });

  it('refuses members (403) and non-members (404), adding nobody', async () => {
    const { email } = await server.createUser('refused');
    expect((await add(roles.member, email, 'member')).status).toBe(403);
    expect((await add(roles.stranger, email, 'member')).status).toBe(404);
    const { body } = await server.callAs(roles.owner, 'GET', `${membersUrl()}?limit=100`);
    expect(body.members.edges.map((edge: { node: { user: { email: string } } }) => edge.node.user.email)).not.toContain(
      email,
    );
  });
});

describe('PATCH /tenants/{id}/members/{user_id}', () => {
  let target: string;
  beforeEach(async () => {
    target = (await addNewMember(server, roles.owner, roles.tenant.id, 'member')).user.id;
  });

  it('lets an admin move a member between member and admin, and answers with the member', async () => {
    const promoted = await setRole(roles.admin, target, 'admin');
    expect(promoted.status).toBe(200);
    expect(promoted.body.member).toMatchObject({ role: 'admin', user: { id: target } });
    expect((await setRole(roles.admin, target, 'member')).body.member.role).toBe('member');
    // Setting the role a member already has changes nothing.
    expect((await setRole(roles.admin, target, 'member')).status).toBe(200);
    expect(await roleOf(target)).toBe('member');
  });

  it('lets only an owner grant, change or take away the owner role', async () => {
    const grantByAdmin = await setRole(roles.admin, target, 'owner');
    expect([grantByAdmin.status, grantByAdmin.body.code]).toEqual([403, 'forbidden']);
    expect(await roleOf(target)).toBe('member');

    expect((await setRole(roles.owner, target, 'owner')).status).toBe(200);
    for (const role of ['admin', 'member', 'owner']) {
      const byAdmin = await setRole(roles.admin, target, role);
      expect([role, byAdmin.status, byAdmin.body.code]).toEqual([role, 403, 'forbidden']);
    }
    const removeByAdmin = await remove(roles.admin, target);
    expect(removeByAdmin.status).toBe(403);
    expect(await roleOf(target)).toBe('owner');

    expect((await setRole(roles.owner, target, 'admin')).status).toBe(200);
    expect(await roleOf(target)).toBe('admin');
  });

  it('refuses members (403) and non-members (404)', async () => {
    expect((await setRole(roles.member, target, 'admin')).status).toBe(403);
    expect((await setRole(roles.stranger, target, 'admin')).status).toBe(404);
    expect(await roleOf(target)).toBe('member');
  });

  it('answers 404 for a user who is not a member', async () => {
    const { status, body } = await setRole(roles.owner, roles.stranger.id, 'admin');
    expect([status, body.code]).toEqual([404, 'not_found']);
  });
});

describe('the last owner', () => {
  it('can be neither demoted nor removed (409 last_owner), until another owner exists', async () => {
    const owner = await server.createUser('sole');
    const tenant = await createTenant(owner, 'Sole owner');
    for (const role of ['admin', 'member']) {
      const demoted = await setRole(owner, owner.id, role, tenant.id);
      expect([role, demoted.status, demoted.body.code]).toEqual([role, 409, 'last_owner']);
    }
    const removed = await remove(owner, owner.id, tenant.id);
    expect([removed.status, removed.body.code]).toEqual([409, 'last_owner']);
    expect((await server.callAs(owner, 'GET', `/v1/tenants/${tenant.id}`)).body.tenant.members.nodes).toEqual([
      { role: 'owner', user: expect.objectContaining({ email: owner.email }) },
    ]);

    // With a second owner, the first may step down; then the second is the last one.
    const second = await server.createUser('second');
    await addMember(owner, tenant.id, second.email, 'owner');
    expect((await setRole(owner, owner.id, 'admin', tenant.id)).status).toBe(200);
    const last = await remove(second, second.id, tenant.id);
    expect([last.status, last.body.code]).toEqual([409, 'last_owner']);
    expect((await remove(second, owner.id, tenant.id)).status).toBe(204);
  });
});

describe('DELETE /tenants/{id}/members/{user_id}', () => {
  it('removes the member (204, no body): the tenant no longer exists for them', async () => {
    const user = await server.createUser('leaving');
    await addMember(roles.owner, roles.tenant.id, user.email, 'admin');
    expect((await server.callAs(user, 'GET', `/v1/tenants/${roles.tenant.id}`)).status).toBe(200);

    const res = await server.call(memberUrl(user.id), { method: 'DELETE', apiKey: roles.admin.apiKey });
    expect(res.status).toBe(204);
    expect(await res.text()).toBe('');
    expect(await roleOf(user.id)).toBeUndefined();
    expect((await server.callAs(user, 'GET', `/v1/tenants/${roles.tenant.id}`)).status).toBe(404);
    expect((await server.callAs(user, 'GET', '/v1/tenants')).body.tenants.edges).toEqual([]);

    // Removing again: no such member. Adding back works.
    expect((await remove(roles.admin, user.id)).status).toBe(404);
    expect((await add(roles.admin, user.email, 'member')).status).toBe(201);
  });

  it('refuses members (403) and non-members (404)', async () => {
    const target = (await addNewMember(server, roles.owner, roles.tenant.id, 'member')).user.id;
    expect((await remove(roles.member, target)).status).toBe(403);
    expect((await remove(roles.stranger, target)).status).toBe(404);
    expect(await roleOf(target)).toBe('member');
  });
});

describe('a member change while its caller is being demoted', () => {
  const onPostgres = process.env.DATABASE_URL ? it : it.skip;
  if (!process.env.DATABASE_URL) console.log('members: the role-check race runs on PostgreSQL only (set DATABASE_URL)');
  // The embedded database runs one transaction at a time, so there the two changes cannot overlap at all.
  onPostgres(
    "checks the caller's role inside the change: a demotion cannot complete while it is in flight",
    async () => {
      const [first, second, third] = await Promise.all(['first', 'second', 'third'].map((n) => server.createUser(n)));
      const tenant = await createTenant(first!, 'Demotion race');
      await addMember(first!, tenant.id, second!.email, 'owner');
      await addMember(first!, tenant.id, third!.email, 'member');
      const blocker = new Client({ connectionString: process.env.DATABASE_URL });
      await blocker.connect();
      const lockWaiters = async () =>
        (
          await blocker.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()`,
          )
        ).rows[0]!.n;
      try {
        // Hold the third member's row, so that the second owner's promotion of them stops right before its write,
        // after every check it makes.
        await blocker.query('BEGIN');
        await blocker.query('SELECT 1 FROM memberships WHERE tenant_id = $1 AND user_id = $2 FOR UPDATE', [
          tenant.id,
          third!.id,
        ]);
        let promotionDone = false;
        const promotion = setRole(second!, third!.id, 'owner', tenant.id).finally(() => (promotionDone = true));
        await until(async () => (await lockWaiters()) >= 1);
        // Meanwhile the first owner demotes the second. It must not complete before the promotion: the promotion
        // acts on the second owner's role, which must still hold when it commits.
        let demotionDone = false;
        const demotion = setRole(first!, second!.id, 'admin', tenant.id).then((res) => {
          demotionDone = true;
          return { ...res, promotionDoneFirst: promotionDone };
        });
        await until(async () => demotionDone || (await lockWaiters()) >= 2);
        await blocker.query('ROLLBACK');
        const [promoted, demoted] = await Promise.all([promotion, demotion]);
        expect(demoted.status).toBe(200);
        expect([promoted.status, demoted.promotionDoneFirst]).toEqual([200, true]);
        const roleIn = async (userId: string) =>
          (
            await server.database.prisma.membership.findUnique({
              where: { tenantId_userId: { tenantId: tenant.id, userId } },
            })
          )?.role;
        expect([await roleIn(third!.id), await roleIn(second!.id)]).toEqual(['owner', 'admin']);
      } finally {
        await blocker.query('ROLLBACK').catch(() => undefined);
        await blocker.end();
      }
    },
  );
});

/** Waits for a condition another connection makes true (no fixed sleep): checks every 10 ms, up to 10 s. */
async function until(condition: () => Promise<boolean>): Promise<void> {
  for (let attempt = 0; attempt < 1000; attempt++) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('condition not met within 10 s');
}
