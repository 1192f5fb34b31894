import { startTestServer, type TestServer, type TestUser } from '../support/server';

/** The two creation operations of the interface document, field by field, over plain HTTP. */
let server: TestServer;
let ada: TestUser;

beforeAll(async () => {
  server = await startTestServer();
  ada = await server.createUser('ada');
});
afterAll(() => server.close());

const iso = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('POST /v1/tenants', () => {
  it('answers 201 with { tenant } holding exactly the seed fields, plus members roles and works paging', async () => {
    const res = await server.call('/v1/tenants', {
      method: 'POST',
      apiKey: ada.apiKey,
      json: { name: 'Acme Research' },
    });
    expect(res.status).toBe(201);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const body = await res.json();
    expect(Object.keys(body)).toEqual(['tenant']);
    const { tenant } = body;
    expect(Object.keys(tenant).sort()).toEqual(
      ['createdAt', 'id', 'members', 'name', 'owner', 'slug', 'updatedAt', 'works'].sort(),
    );
    expect(res.headers.get('location')).toBe(`/v1/tenants/${tenant.id}`);
    expect(tenant).toMatchObject({ name: 'Acme Research', slug: expect.stringMatching(/^acme-research(-\d+)?$/) });
    expect(tenant.owner).toEqual({ firstName: 'ada', lastName: 'Tester', email: ada.email });
    expect(tenant.createdAt).toMatch(iso);
    expect(tenant.updatedAt).toMatch(iso);
    expect(tenant.members).toEqual({
      nodes: [{ role: 'owner', user: { firstName: 'ada', lastName: 'Tester', email: ada.email } }],
    });
    expect(tenant.works).toEqual({ totalCount: 0, edges: [], pageInfo: { hasNextPage: false, endCursor: null } });
  });

  it('trims the name and keeps unicode as given', async () => {
    const res = await server.call('/v1/tenants', {
      method: 'POST',
      apiKey: ada.apiKey,
      json: { name: '  東京 Café 🚀  ' },
    });
    expect(res.status).toBe(201);
    const { tenant } = await res.json();
    expect(tenant.name).toBe('東京 Café 🚀');
    expect(tenant.slug).toMatch(/^cafe(-\d+)?$/);
  });
});

describe('POST /v1/tenants/{tenant_id}/works', () => {
  it('answers 201 with { work } holding exactly the seed fields', async () => {
    const created = await (
      await server.call('/v1/tenants', { method: 'POST', apiKey: ada.apiKey, json: { name: 'Works Inc' } })
    ).json();
    const tenantId = created.tenant.id;
    const res = await server.call(`/v1/tenants/${tenantId}/works`, {
      method: 'POST',
      apiKey: ada.apiKey,
      json: { name: 'Annual Report 2026', description: 'Figures and sign-off.' },
    });
    expect(res.status).toBe(201);
    const body = await res.json();
    expect(Object.keys(body)).toEqual(['work']);
    const { work } = body;
    expect(Object.keys(work).sort()).toEqual(
      ['createdAt', 'description', 'discardedAt', 'id', 'name', 'owner', 'slug', 'updatedAt'].sort(),
    );
    expect(res.headers.get('location')).toBe(`/v1/tenants/${tenantId}/works/${work.id}`);
    expect(work).toMatchObject({
      name: 'Annual Report 2026',
      slug: 'annual-report-2026',
      description: 'Figures and sign-off.',
      discardedAt: null,
      owner: { firstName: 'ada', lastName: 'Tester', email: ada.email },
    });
    expect(work.createdAt).toMatch(iso);
    expect(work.updatedAt).toMatch(iso);

    const tenant = await (await server.call(`/v1/tenants/${tenantId}`, { apiKey: ada.apiKey })).json();
    expect(tenant.tenant.works.totalCount).toBe(1);
    expect(tenant.tenant.works.edges[0]!.node).toEqual(work);
  });

  it('defaults the description to an empty string', async () => {
    const { tenant } = await (
      await server.call('/v1/tenants', { method: 'POST', apiKey: ada.apiKey, json: { name: 'No description' } })
    ).json();
    const res = await server.call(`/v1/tenants/${tenant.id}/works`, {
      method: 'POST',
      apiKey: ada.apiKey,
      json: { name: 'W' },
    });
    expect(res.status).toBe(201);
    expect((await res.json()).work.description).toBe('');
  });
});
