import { createTenant, createWork, requestInNewWork } from '../support/fixtures';
import { startTestServer, type TestServer, type TestUser } from '../support/server';
import { addNewMember } from '../support/roles';

/** ETag on single-resource responses, If-None-Match → 304, If-Match → 412 on PATCHes and request actions. */
let server: TestServer;
let ada: TestUser;

beforeAll(async () => {
  server = await startTestServer();
  ada = await server.createUser('ada');
});
afterAll(() => server.close());

const STRONG_TAG = /^"[A-Za-z0-9_-]{27}"$/;

async function get<Url extends string>(path: Url, headers: Record<string, string> = {}) {
  return server.call(path, { apiKey: ada.apiKey, headers });
}

function send<Method extends string, Url extends string>(
  method: Method,
  path: Url,
  json?: unknown,
  headers: Record<string, string> = {},
) {
  return server.call(path, { method, apiKey: ada.apiKey, json, headers });
}

async function expectPreconditionFailed(res: Response) {
  expect(res.status).toBe(412);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(await res.json()).toMatchObject({ status: 412, code: 'precondition_failed' });
}

describe('ETag and If-None-Match', () => {
  it('tags single-resource reads strongly and answers 304 without a body while nothing changed', async () => {
    const tenant = await createTenant(ada);
    const work = await createWork(ada, tenant.id);
    const path = `/v1/tenants/${tenant.id}/works/${work.id}` as const;
    const first = await get(path);
    const tag = first.headers.get('etag')!;
    expect(tag).toMatch(STRONG_TAG);
    expect((await get(path)).headers.get('etag')).toBe(tag);

    const cached = await get(path, { 'If-None-Match': tag });
    expect(cached.status).toBe(304);
    expect(cached.headers.get('etag')).toBe(tag);
    expect(cached.headers.get('x-request-id')).toBeTruthy();
    expect(await cached.text()).toBe('');
    expect((await get(path, { 'If-None-Match': `"other", W/${tag}` })).status).toBe(304);
    expect((await get(path, { 'If-None-Match': '*' })).status).toBe(304);
    expect((await get(path, { 'If-None-Match': '"something-else"' })).status).toBe(200);

    expect((await send('PATCH', path, { description: 'changed' })).status).toBe(200);
    const changed = await get(path, { 'If-None-Match': tag });
    expect(changed.status).toBe(200);
    expect(changed.headers.get('etag')).not.toBe(tag);
  });

  it('gives a tenant a new tag when something it embeds changes, not only its own row', async () => {
    const tenant = await createTenant(ada);
    const path = `/v1/tenants/${tenant.id}` as const;
    const tag = (await get(path)).headers.get('etag')!;
    await createWork(ada, tenant.id, 'A new work');
    const after = await get(path, { 'If-None-Match': tag });
    expect(after.status).toBe(200);
    expect((await after.json()).tenant.works.totalCount).toBe(1);
  });

  it('tags GET /me, GET request, creations and the action responses, with the same tag for the same state', async () => {
    expect((await get('/v1/me')).headers.get('etag')).toMatch(STRONG_TAG);
    const { tenant, work } = await requestInNewWork(ada);
    const created = await send('POST', `/v1/tenants/${tenant.id}/works/${work.id}/requests`, {
      title: 'Tagged',
      recipient: { email: 'r@example.com' },
    });
    const createdTag = created.headers.get('etag');
    const { request } = await created.json();
    const path = `/v1/tenants/${tenant.id}/works/${work.id}/requests/${request.id}` as const;
    expect((await get(path)).headers.get('etag')).toBe(createdTag);

    const confirmed = await send('PUT', `${path}/confirm`);
    expect(confirmed.status).toBe(200);
    const confirmedTag = confirmed.headers.get('etag');
    expect(confirmedTag).toMatch(STRONG_TAG);
    expect(confirmedTag).not.toBe(createdTag);
    // The action returns the bare Request, GET wraps it in { request }: one resource state, one tag.
    expect((await get(path)).headers.get('etag')).toBe(confirmedTag);
  });
});

describe('If-Match on request actions', () => {
  it('applies the action when the tag is current, and answers 412 with nothing changed when it is not', async () => {
    const { path } = await requestInNewWork(ada);
    const url = `/v1/tenants/${path.tenant_id}/works/${path.work_id}/requests/${path.id}` as const;
    const pendingTag = (await get(url)).headers.get('etag')!;

    const confirmed = await send('PUT', `${url}/confirm`, { answer: 'Yes' }, { 'If-Match': pendingTag });
    expect(confirmed.status).toBe(200);

    // The tag was for the pending request; it is confirmed now.
    await expectPreconditionFailed(await send('PUT', `${url}/validate`, undefined, { 'If-Match': pendingTag }));
    await expectPreconditionFailed(await send('DELETE', `${url}/cancel`, undefined, { 'If-Match': pendingTag }));
    expect((await (await get(url)).json()).request.status).toBe('confirmed');
    const events = await (await get(`${url}/events`)).json();
    expect(events.events.totalCount).toBe(1);

    // Weak tags never match If-Match; a list may hold the current tag; * matches any existing request.
    const confirmedTag = confirmed.headers.get('etag')!;
    await expectPreconditionFailed(
      await send('PUT', `${url}/validate`, undefined, { 'If-Match': `W/${confirmedTag}` }),
    );
    const validated = await send('PUT', `${url}/validate`, undefined, { 'If-Match': `"stale", ${confirmedTag}` });
    expect(validated.status).toBe(200);
    expect((await send('PUT', `${url}/validate`, undefined, { 'If-Match': '*' })).status).toBe(200);
  });

  it('checks If-Match before the transition rules: a stale tag is 412 even for an action that would be refused', async () => {
    const { path } = await requestInNewWork(ada);
    const url = `/v1/tenants/${path.tenant_id}/works/${path.work_id}/requests/${path.id}` as const;
    await expectPreconditionFailed(await send('PUT', `${url}/validate`, undefined, { 'If-Match': '"stale"' }));
    expect((await send('PUT', `${url}/validate`)).status).toBe(409);
  });

  it('lets exactly one of two actions with the same tag through, the other gets 412', async () => {
    const { path } = await requestInNewWork(ada);
    const url = `/v1/tenants/${path.tenant_id}/works/${path.work_id}/requests/${path.id}` as const;
    const tag = (await get(url)).headers.get('etag')!;
    const [confirm, early] = await Promise.all([
      send('PUT', `${url}/confirm`, undefined, { 'If-Match': tag }),
      send('PUT', `${url}/early_validate`, undefined, { 'If-Match': tag }),
    ]);
    expect([confirm.status, early.status].sort()).toEqual([200, 412]);
    expect((await (await get(`${url}/events`)).json()).events.totalCount).toBe(1);
  });
});

describe('If-Match on PATCH', () => {
  it('updates a work only while its tag is current; a concurrent pair with one tag gives one 200 and one 412', async () => {
    const tenant = await createTenant(ada);
    const work = await createWork(ada, tenant.id);
    const path = `/v1/tenants/${tenant.id}/works/${work.id}` as const;
    const tag = (await get(path)).headers.get('etag')!;

    const [one, two] = await Promise.all([
      send('PATCH', path, { name: 'Edit one' }, { 'If-Match': tag }),
      send('PATCH', path, { name: 'Edit two' }, { 'If-Match': tag }),
    ]);
    expect([one.status, two.status].sort()).toEqual([200, 412]);
    const winner = one.status === 200 ? one : two;
    const current = await get(path);
    expect(current.headers.get('etag')).toBe(winner.headers.get('etag'));
    expect((await current.json()).work.name).toBe((await winner.json()).work.name);
    await expectPreconditionFailed(await send('PATCH', path, { name: 'Late' }, { 'If-Match': tag }));
  });

  it('answers 412 before 409 for a discarded work with a stale tag, and 409 with a current one', async () => {
    const tenant = await createTenant(ada);
    const work = await createWork(ada, tenant.id);
    const path = `/v1/tenants/${tenant.id}/works/${work.id}` as const;
    const keptTag = (await get(path)).headers.get('etag')!;
    const discarded = await send('DELETE', path);
    const discardedTag = discarded.headers.get('etag')!;
    expect(discardedTag).toMatch(STRONG_TAG);
    await expectPreconditionFailed(await send('PATCH', path, { name: 'Nope' }, { 'If-Match': keptTag }));
    const refused = await send('PATCH', path, { name: 'Nope' }, { 'If-Match': discardedTag });
    expect(refused.status).toBe(409);
    expect((await refused.json()).code).toBe('work_discarded');
  });

  it('renames a tenant only while its tag is current', async () => {
    const tenant = await createTenant(ada);
    const path = `/v1/tenants/${tenant.id}` as const;
    const tag = (await get(path)).headers.get('etag')!;
    const renamed = await send('PATCH', path, { name: 'Renamed' }, { 'If-Match': tag });
    expect(renamed.status).toBe(200);
    expect(renamed.headers.get('etag')).toBe((await get(path)).headers.get('etag'));
    await expectPreconditionFailed(await send('PATCH', path, { name: 'Again' }, { 'If-Match': tag }));
    expect((await (await get(path)).json()).tenant.name).toBe('Renamed');
  });

  it("changes a member's role only while the member's tag (from reading or changing them) is current", async () => {
    const tenant = await createTenant(ada);
    const member = await addNewMember(server, ada, tenant.id, 'member', 'tagged');
    const path = `/v1/tenants/${tenant.id}/members/${member.user.id}` as const;
    const readTag = (await get(path)).headers.get('etag')!;
    const promoted = await send('PATCH', path, { role: 'admin' }, { 'If-Match': readTag });
    expect(promoted.status).toBe(200);
    await expectPreconditionFailed(await send('PATCH', path, { role: 'member' }, { 'If-Match': readTag }));
    const demoted = await send('PATCH', path, { role: 'member' }, { 'If-Match': promoted.headers.get('etag')! });
    expect(demoted.status).toBe(200);
    expect((await demoted.json()).member.role).toBe('member');
  });

  it('ignores If-Match where the contract does not take it, and PATCH works as before without it', async () => {
    const tenant = await createTenant(ada);
    const work = await createWork(ada, tenant.id);
    const path = `/v1/tenants/${tenant.id}/works/${work.id}` as const;
    expect((await send('PATCH', path, { name: 'No precondition' })).status).toBe(200);
    expect((await send('DELETE', path, undefined, { 'If-Match': '"stale"' })).status).toBe(200);
  });
});
