import { createRequest, createTenant, createWork } from '../support/fixtures';
import { addMember } from '../support/roles';
import { startTestServer, type TestServer, type TestUser } from '../support/server';

/** Works: list with ?discarded=, get, update, discard (DELETE) and undiscard; a discarded work is read-only. */
let server: TestServer;
let ada: TestUser;
let member: TestUser;

beforeAll(async () => {
  server = await startTestServer();
  [ada, member] = await Promise.all([server.createUser('ada'), server.createUser('member')]);
});
afterAll(() => server.close());

const idsOf = (connection: { edges: Array<{ node: { id: string } }> }) => connection.edges.map((edge) => edge.node.id);

describe('discarding and restoring a work', () => {
  let tenantId: string;
  let kept: string[];
  let work: { id: string };
  let requestPath: `/v1/tenants/${string}/works/${string}/requests/${string}`;

  beforeAll(async () => {
    tenantId = (await createTenant(ada, 'Discards')).id;
    await addMember(ada, tenantId, member, 'member');
    kept = [];
    for (let i = 0; i < 3; i++) kept.push((await createWork(ada, tenantId, `Kept ${i}`)).id);
    work = await createWork(ada, tenantId, 'To discard');
    const request = await createRequest(ada, tenantId, work.id);
    requestPath = `/v1/tenants/${tenantId}/works/${work.id}/requests/${request.id}`;
  });

  const list = async (query = '') =>
    (await server.callAs(ada, 'GET', `/v1/tenants/${tenantId}/works${query}`)).body.works;
  const tenantWorks = async () => (await server.callAs(ada, 'GET', `/v1/tenants/${tenantId}`)).body.tenant.works;

  it('is listed and counted while kept', async () => {
    expect((await list()).totalCount).toBe(4);
    expect(idsOf(await list())).toContain(work.id);
    expect((await tenantWorks()).totalCount).toBe(4);
    expect((await list('?discarded=true')).totalCount).toBe(0);
  });

  it('DELETE sets discardedAt; the work leaves the default lists and works.totalCount', async () => {
    const discarded = await server.callAs(ada, 'DELETE', `/v1/tenants/${tenantId}/works/${work.id}`);
    expect(discarded.status).toBe(200);
    expect(discarded.body.work).toMatchObject({ id: work.id, discardedAt: expect.any(String) });
    expect(Date.parse(discarded.body.work.updatedAt)).toBe(Date.parse(discarded.body.work.discardedAt!));

    const byDefault = await list();
    expect(byDefault.totalCount).toBe(3);
    expect(idsOf(byDefault)).toEqual([...kept].reverse());
    expect(await list('?discarded=false')).toEqual(byDefault);
    const embedded = await tenantWorks();
    expect(embedded.totalCount).toBe(3);
    expect(idsOf(embedded)).toEqual([...kept].reverse());

    const onlyDiscarded = await list('?discarded=true');
    expect(onlyDiscarded.totalCount).toBe(1);
    expect(onlyDiscarded.edges[0]!.node).toEqual(discarded.body.work);
    const all = await list('?discarded=all');
    expect(all.totalCount).toBe(4);
    expect(idsOf(all)).toEqual([work.id, ...[...kept].reverse()]);

    // Still readable by id.
    expect((await server.callAs(member, 'GET', `/v1/tenants/${tenantId}/works/${work.id}`)).body.work).toEqual(
      discarded.body.work,
    );
  });

  it('discarding again returns the work unchanged', async () => {
    const before = (await server.callAs(ada, 'GET', `/v1/tenants/${tenantId}/works/${work.id}`)).body.work;
    const again = await server.callAs(ada, 'DELETE', `/v1/tenants/${tenantId}/works/${work.id}`);
    expect(again.status).toBe(200);
    expect(again.body.work).toEqual(before);
  });

  it('makes its requests read-only: reads work, every action and new requests get 409 work_discarded', async () => {
    expect((await server.callAs(member, 'GET', requestPath)).status).toBe(200);
    expect((await server.callAs(member, 'GET', `${requestPath}/events`)).body.events.totalCount).toBe(0);
    expect(
      (await server.callAs(member, 'GET', `/v1/tenants/${tenantId}/works/${work.id}/requests`)).body.requests
        .totalCount,
    ).toBe(1);
    for (const [method, action] of [
      ['PUT', 'confirm'],
      ['PUT', 'early_validate'],
      ['PUT', 'validate'],
      ['DELETE', 'cancel'],
    ] as const) {
      const res = await server.callAs(member, method, `${requestPath}/${action}`);
      expect([action, res.status, res.body.code]).toEqual([action, 409, 'work_discarded']);
    }
    const created = await server.callAs(member, 'POST', `/v1/tenants/${tenantId}/works/${work.id}/requests`, {
      title: 'Too late',
      recipient: { email: 'r@example.com' },
    });
    expect([created.status, created.body.code]).toEqual([409, 'work_discarded']);
    const updated = await server.callAs(ada, 'PATCH', `/v1/tenants/${tenantId}/works/${work.id}`, { name: 'Renamed' });
    expect([updated.status, updated.body.code]).toEqual([409, 'work_discarded']);

    expect((await server.callAs(member, 'GET', requestPath)).body.request.status).toBe('pending');
    expect(
      (await server.callAs(member, 'GET', `/v1/tenants/${tenantId}/works/${work.id}/requests`)).body.requests
        .totalCount,
    ).toBe(1);
  });

  it('PUT .../undiscard brings it back in the lists and the count, and its requests move again', async () => {
    const restored = await server.callAs(ada, 'PUT', `/v1/tenants/${tenantId}/works/${work.id}/undiscard`);
    expect(restored.status).toBe(200);
    expect(restored.body.work).toMatchObject({ id: work.id, discardedAt: null, name: 'To discard' });
    expect((await list()).totalCount).toBe(4);
    expect(idsOf(await list())[0]).toBe(work.id);
    expect((await tenantWorks()).totalCount).toBe(4);
    expect((await list('?discarded=true')).totalCount).toBe(0);

    const again = await server.callAs(ada, 'PUT', `/v1/tenants/${tenantId}/works/${work.id}/undiscard`);
    expect(again.body.work).toEqual(restored.body.work);

    const confirmed = await server.callAs(member, 'PUT', `${requestPath}/confirm`, { answer: 'Back in business' });
    expect([confirmed.status, confirmed.body.status]).toEqual([200, 'confirmed']);
  });

  it('refuses a member (403) and a non-member (404), changing nothing', async () => {
    const stranger = await server.createUser('stranger');
    const target = kept[0]!;
    for (const [method, suffix] of [
      ['DELETE', ''],
      ['PUT', '/undiscard'],
    ] as const) {
      expect((await server.callAs(member, method, `/v1/tenants/${tenantId}/works/${target}${suffix}`)).status).toBe(
        403,
      );
      expect((await server.callAs(stranger, method, `/v1/tenants/${tenantId}/works/${target}${suffix}`)).status).toBe(
        404,
      );
    }
    expect(
      (await server.callAs(ada, 'GET', `/v1/tenants/${tenantId}/works/${target}`)).body.work.discardedAt,
    ).toBeNull();
  });
});

describe('GET and PATCH /tenants/{id}/works/{work_id}', () => {
  it('updates the name (trimmed) and the description, never the slug', async () => {
    const tenantId = (await createTenant(ada, 'Updates')).id;
    const work = await createWork(ada, tenantId, 'Original Name');
    const renamed = await server.callAs(ada, 'PATCH', `/v1/tenants/${tenantId}/works/${work.id}`, {
      name: '  New Name ',
    });
    expect(renamed.status).toBe(200);
    expect(renamed.body.work).toMatchObject({ name: 'New Name', slug: 'original-name', description: '' });
    const described = await server.callAs(ada, 'PATCH', `/v1/tenants/${tenantId}/works/${work.id}`, {
      description: '  Kept as is\n',
    });
    expect(described.body.work).toMatchObject({
      name: 'New Name',
      slug: 'original-name',
      description: '  Kept as is\n',
    });
    expect(Date.parse(described.body.work.updatedAt)).toBeGreaterThanOrEqual(Date.parse(work.updatedAt));
    expect(described.body.work.createdAt).toBe(work.createdAt);
    expect((await server.callAs(ada, 'GET', `/v1/tenants/${tenantId}/works/${work.id}`)).body.work).toEqual(
      described.body.work,
    );

    // The old name is free for a new work's slug; the renamed work kept its own.
    expect((await createWork(ada, tenantId, 'New Name')).slug).toBe('new-name');
    expect((await createWork(ada, tenantId, 'Original Name')).slug).toBe('original-name-2');
  });

  it('gives work slugs per tenant: the same name in two tenants gets the same slug', async () => {
    const [a, b] = [await createTenant(ada, 'Tenant A'), await createTenant(ada, 'Tenant B')];
    expect((await createWork(ada, a.id, 'Shared Name')).slug).toBe('shared-name');
    expect((await createWork(ada, b.id, 'Shared Name')).slug).toBe('shared-name');
    expect((await createWork(ada, a.id, 'Shared Name')).slug).toBe('shared-name-2');
  });

  it('answers 404 for a work of another tenant, even to a member of both', async () => {
    const [a, b] = [await createTenant(ada, 'Home'), await createTenant(ada, 'Away')];
    const work = await createWork(ada, a.id, 'Lives in A');
    for (const [method, suffix, json] of [
      ['GET', '', undefined],
      ['PATCH', '', { name: 'x' }],
      ['DELETE', '', undefined],
      ['PUT', '/undiscard', undefined],
      ['GET', '/requests', undefined],
    ] as const) {
      const res = await server.callAs(ada, method, `/v1/tenants/${b.id}/works/${work.id}${suffix}`, json);
      expect([method, suffix, res.status, res.body.code]).toEqual([method, suffix, 404, 'not_found']);
    }
    expect((await server.callAs(ada, 'GET', `/v1/tenants/${a.id}/works/${work.id}`)).body.work.name).toBe('Lives in A');
  });

  it('lets any member create a work, owned by them', async () => {
    const tenantId = (await createTenant(ada, 'Member works')).id;
    await addMember(ada, tenantId, member, 'member');
    const created = await server.callAs(member, 'POST', `/v1/tenants/${tenantId}/works`, { name: 'By a member' });
    expect(created.status).toBe(201);
    expect(created.body.work.owner).toEqual({ firstName: 'member', lastName: 'Tester', email: member.email });
    expect(
      (await server.callAs(member, 'PATCH', `/v1/tenants/${tenantId}/works/${created.body.work.id}`, { name: 'x' }))
        .status,
    ).toBe(403);
  });
});
