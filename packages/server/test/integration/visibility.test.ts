import { requestInNewWork } from '../support/fixtures';
import { startTestServer, type TestServer, type TestUser } from '../support/server';

/** To a non-member, a tenant and everything in it does not exist: 404, never 403. */
let server: TestServer;
let owner: TestUser;
let stranger: TestUser;
let paths: Record<string, string>;

beforeAll(async () => {
  server = await startTestServer();
  owner = await server.createUser('owner');
  stranger = await server.createUser('stranger');
  const { tenant, work, request } = await requestInNewWork(owner);
  const tenantPath = `/v1/tenants/${tenant.id}`;
  const workPath = `${tenantPath}/works/${work.id}`;
  const requestPath = `${workPath}/requests/${request.id}`;
  paths = { tenantPath, workPath, requestPath };
});
afterAll(() => server.close());

const missing = '01a20000-0000-7000-8000-000000000000';

describe('tenant visibility', () => {
  it.each([
    ['GET', 'tenantPath', ''],
    ['GET', 'tenantPath', '/works'],
    ['POST', 'tenantPath', '/works'],
    ['GET', 'tenantPath', '/members'],
    ['GET', 'workPath', ''],
    ['GET', 'workPath', '/requests'],
    ['POST', 'workPath', '/requests'],
    ['GET', 'requestPath', ''],
    ['GET', 'requestPath', '/events'],
    ['PUT', 'requestPath', '/confirm'],
    ['PUT', 'requestPath', '/validate'],
    ['PUT', 'requestPath', '/early_validate'],
    ['DELETE', 'requestPath', '/cancel'],
  ])('%s %s%s is 404 for a non-member, like an id that does not exist', async (method, base, suffix) => {
    const json =
      method === 'POST'
        ? base === 'tenantPath'
          ? { name: 'x' }
          : { title: 'x', recipient: { email: 'r@example.com' } }
        : undefined;
    const res = await server.call(paths[base] + suffix, { method, apiKey: stranger.apiKey, json });
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect((await res.json()).code).toBe('not_found');

    const asOwner = await server.call(paths[base]!.replace(/[0-9a-f-]{36}$/, missing) + suffix, {
      method,
      apiKey: owner.apiKey,
      json,
    });
    expect(asOwner.status).toBe(404);
  });

  it('shows the owner what the stranger cannot see', async () => {
    const res = await server.call(paths.requestPath!, { apiKey: owner.apiKey });
    expect(res.status).toBe(200);
  });

  it('does not list the tenant among the stranger’s tenants', async () => {
    const res = await server.call('/v1/tenants', { apiKey: stranger.apiKey });
    expect((await res.json()).tenants.totalCount).toBe(0);
  });
});
