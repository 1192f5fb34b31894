import { DEFAULT_LIMITS } from '../../src/domain/limits';
import { authenticate } from '../../src/domain/api-keys/api-keys';
import { createTenant as createTenantInDomain } from '../../src/domain/tenants/tenants';
import { createWork as createWorkInDomain } from '../../src/domain/works/works';
import { createTenant, createWork, ok } from '../support/fixtures';
import { addMember } from '../support/roles';
import { startTestServer, type TestServer, type TestUser } from '../support/server';

/** Tenants: list mine, get, rename (the slug never changes), slugs unique across the service. */
let server: TestServer;
let ada: TestUser;
let bob: TestUser;
// Tenant slugs are unique across the service, and a PostgreSQL test database outlives a run: names that must
// get a predictable slug carry this run's tag.
const tag = `${process.pid}-${Date.now()}`;

beforeAll(async () => {
  server = await startTestServer();
  [ada, bob] = await Promise.all([server.createUser('ada'), server.createUser('bob')]);
});
afterAll(() => server.close());

describe('GET /tenants', () => {
  it('lists the tenants I am a member of, whatever my role, newest first', async () => {
    const carol = await server.createUser('carol');
    const own = await createTenant(carol, 'Carol’s own');
    const adaTenant = await createTenant(ada, 'Ada’s, with Carol');
    await addMember(ada, adaTenant.id, carol, 'member');
    await createTenant(ada, 'Ada’s, without Carol');

    const { status, body } = await server.callAs(carol, 'GET', '/v1/tenants');
    expect(status).toBe(200);
    expect(body.tenants.totalCount).toBe(2);
    // Newest first is by the tenant's creation, not by when I joined it.
    expect(body.tenants.edges.map((edge: { node: { id: string } }) => edge.node.id)).toEqual([adaTenant.id, own.id]);
    const listed = body.tenants.edges[0]!.node;
    expect(listed.members.nodes).toEqual([
      { role: 'owner', user: { firstName: 'ada', lastName: 'Tester', email: ada.email } },
      { role: 'member', user: { firstName: 'carol', lastName: 'Tester', email: carol.email } },
    ]);
  });
});

describe('GET /tenants/{id}', () => {
  it('returns { tenant } with its members and its first 20 kept works, newest first', async () => {
    const tenant = await createTenant(ada, 'With works');
    const works = [];
    for (let i = 0; i < 3; i++) works.push(await createWork(ada, tenant.id, `Work ${i}`));
    const { status, body, headers } = await server.callAs(ada, 'GET', `/v1/tenants/${tenant.id}`);
    expect(status).toBe(200);
    expect(headers.get('content-type')).toMatch(/^application\/json/);
    expect(Object.keys(body)).toEqual(['tenant']);
    expect(body.tenant).toMatchObject({
      id: tenant.id,
      name: 'With works',
      slug: tenant.slug,
      createdAt: tenant.createdAt,
    });
    expect(body.tenant.works.totalCount).toBe(3);
    expect(body.tenant.works.edges.map((edge: { node: { id: string } }) => edge.node.id)).toEqual(
      works.map((work) => work.id).reverse(),
    );
    expect(body.tenant.works.pageInfo).toEqual({ hasNextPage: false, endCursor: body.tenant.works.edges[2]!.cursor });
  });
});

describe('PATCH /tenants/{id}', () => {
  it('renames (trimmed), keeps the slug and moves updatedAt, for an owner or an admin', async () => {
    const tenant = await createTenant(ada, `Before Rename ${tag}`);
    await addMember(ada, tenant.id, bob, 'admin');

    const renamed = await server.callAs(bob, 'PATCH', `/v1/tenants/${tenant.id}`, { name: '  After Rename  ' });
    expect(renamed.status).toBe(200);
    expect(renamed.body.tenant).toMatchObject({
      id: tenant.id,
      name: 'After Rename',
      slug: tenant.slug,
      createdAt: tenant.createdAt,
    });
    expect(Date.parse(renamed.body.tenant.updatedAt)).toBeGreaterThanOrEqual(Date.parse(tenant.updatedAt));
    expect(renamed.body.tenant.members.nodes).toHaveLength(2);

    const read = await server.callAs(ada, 'GET', `/v1/tenants/${tenant.id}`);
    expect(read.body.tenant).toEqual(renamed.body.tenant);

    // A new tenant with the old name gets the old slug's base; the renamed one keeps its own.
    const again = await createTenant(ada, `Before Rename ${tag}`);
    expect(again.slug).toBe(`${tenant.slug}-2`);
  });

  it('answers 403 to a member and 404 to a non-member, renaming nothing', async () => {
    const tenant = await createTenant(ada, 'Unchanged');
    await addMember(ada, tenant.id, bob, 'member');
    const carol = await server.createUser('carol');
    expect((await server.callAs(bob, 'PATCH', `/v1/tenants/${tenant.id}`, { name: 'Bob was here' })).status).toBe(403);
    expect((await server.callAs(carol, 'PATCH', `/v1/tenants/${tenant.id}`, { name: 'Carol was here' })).status).toBe(
      404,
    );
    expect(
      ok(await ada.client.GET('/tenants/{tenant_id}', { params: { path: { tenant_id: tenant.id } } })).tenant.name,
    ).toBe('Unchanged');
  });
});

describe('slugs', () => {
  it('are unique across the service: a second tenant of the same name, even another user’s, gets -2, -3', async () => {
    const name = `Slug Clash ${tag}`;
    const first = await createTenant(ada, name);
    const second = await createTenant(bob, name);
    const third = await createTenant(ada, `  ${name.toUpperCase()}!  `);
    expect([first.slug, second.slug, third.slug]).toEqual([
      `slug-clash-${tag}`,
      `slug-clash-${tag}-2`,
      `slug-clash-${tag}-3`,
    ]);
  });

  it('fold accents and fall back to "tenant" for names with nothing usable', async () => {
    expect((await createTenant(ada, 'Crème Brûlée Ærø')).slug).toMatch(/^creme-brulee-aero(-\d+)?$/);
    expect((await createTenant(ada, '東京 🚀')).slug).toMatch(/^tenant(-\d+)?$/);
  });

  it('stay unique when tenants of the same name are created at the same moment', async () => {
    // Straight into the domain, all started in one tick: every creation reads the taken slugs before any
    // inserts, so all but one collide on the unique index and must pick again.
    const db = server.database;
    const actor = await authenticate(db, ada.apiKey);
    const name = `Same Moment ${tag}`;
    const tenants = await Promise.all(
      Array.from({ length: 5 }, () => createTenantInDomain(db, actor, { name }, DEFAULT_LIMITS.tenantsPerUser)),
    );
    const slugs = tenants.map((tenant) => tenant.slug).sort();
    expect(new Set(slugs).size).toBe(5);
    const base = `same-moment-${tag}`;
    expect(slugs).toEqual([base, `${base}-2`, `${base}-3`, `${base}-4`, `${base}-5`]);

    // Work slugs likewise, within one tenant.
    const works = await Promise.all(
      Array.from({ length: 5 }, () => createWorkInDomain(db, actor, tenants[0]!.id, { name: 'Same work' })),
    );
    expect(works.map((work) => work.slug).sort()).toEqual([
      'same-work',
      'same-work-2',
      'same-work-3',
      'same-work-4',
      'same-work-5',
    ]);
  });
});
