import { countOwnedTenantsOf } from '@works-api/prisma';
import { startTestServer, type TestResponse, type TestServer, type TestUser } from '../support/server';

/**
 * What one user or tenant may hold: active API keys per user, owned tenants per user, webhook endpoints
 * per tenant. Each refusal is a 409 with its own code; concurrent creations never overshoot the cap; freeing a
 * place (revoke, delete) makes room again. Small caps here; the defaults are 100, 100 and 20.
 */
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ limits: { apiKeysPerUser: 3, tenantsPerUser: 3, webhookEndpointsPerTenant: 2 } });
});
afterAll(() => server.close());

const statuses = (responses: TestResponse[]) => responses.map((res) => res.status).sort();

const post = <Url extends string>(user: TestUser, path: Url, json: unknown) =>
  server.call(path, { method: 'POST', apiKey: user.apiKey, json });

describe('API keys per user', () => {
  it('refuses a key over the cap with 409 api_key_limit_reached, also to concurrent requests, until one is revoked', async () => {
    const ada = await server.createUser('ada'); // one key already, from the operator route
    const attempts = await Promise.all(
      Array.from({ length: 6 }, (_, i) => post(ada, '/v1/api-keys', { name: `k${i}` })),
    );
    expect(statuses(attempts)).toEqual([201, 201, 409, 409, 409, 409]);
    const refused = attempts.find((res) => res.status === 409)!;
    expect(await refused.json()).toMatchObject({
      code: 'api_key_limit_reached',
      detail: 'You already have 3 active API keys, the most allowed; revoke one first.',
    });
    const keys = (await (await server.call('/v1/api-keys', { apiKey: ada.apiKey })).json()).apiKeys;
    expect(keys.totalCount).toBe(3);

    // Revoked keys do not count.
    const other = keys.edges.map((edge: { node: { id: string } }) => edge.node.id).at(0) as string;
    expect((await server.call(`/v1/api-keys/${other}`, { method: 'DELETE', apiKey: ada.apiKey })).status).toBe(200);
    expect((await post(ada, '/v1/api-keys', { name: 'after revoking' })).status).toBe(201);
    expect((await post(ada, '/v1/api-keys', { name: 'one too many' })).status).toBe(409);

    // Another user's keys are theirs.
    const bob = await server.createUser('bob');
    expect((await post(bob, '/v1/api-keys', { name: 'bob' })).status).toBe(201);
  });
});

describe('tenants per user', () => {
  it('refuses a tenant over the cap with 409 tenant_limit_reached, also to concurrent requests', async () => {
    const ada = await server.createUser('ada');
    const attempts = await Promise.all(
      Array.from({ length: 7 }, (_, i) => post(ada, '/v1/tenants', { name: `T${i}` })),
    );
    expect(statuses(attempts)).toEqual([201, 201, 201, 409, 409, 409, 409]);
    expect(await attempts.find((res) => res.status === 409)!.json()).toMatchObject({
      code: 'tenant_limit_reached',
      detail: 'You already own 3 tenants, the most allowed.',
    });
    const mine = (await (await server.call('/v1/tenants', { apiKey: ada.apiKey })).json()).tenants;
    expect(mine.totalCount).toBe(3);
    expect(await countOwnedTenantsOf(server.database, ada.id)).toBe(3);
  });

  it('counts only the tenants a user owns: being added to others is not limited and does not use places', async () => {
    const ada = await server.createUser('ada');
    const bob = await server.createUser('bob');
    for (let i = 0; i < 3; i++) expect((await post(bob, '/v1/tenants', { name: `Bob ${i}` })).status).toBe(201);
    const adaTenant = (await (await post(ada, '/v1/tenants', { name: 'Ada' })).json()).tenant.id;
    // Bob, at his cap, can still join Ada's tenant; Ada, a member of none of Bob's, still has two places.
    const invited = await post(ada, `/v1/tenants/${adaTenant}/members`, { email: bob.email, role: 'member' });
    expect(invited.status).toBe(202);
    const { invitation } = await invited.json();
    expect((await post(bob, `/v1/me/invitations/${invitation.id}/accept`, undefined)).status).toBe(200);
    expect((await post(bob, '/v1/tenants', { name: 'Bob 4' })).status).toBe(409);
    expect((await post(ada, '/v1/tenants', { name: 'Ada 2' })).status).toBe(201);
  });
});

describe('tenants per user, from far below the cap to it', () => {
  // Far below the cap a creation counts in its connection's slot; its last 15 places are taken one at a time
  // (count_new_tenant). Concurrent creations that cross from one way to the other still stop exactly at the cap.
  it('lets exactly the cap through when concurrent creations cross from the far way to the near one', async () => {
    const wide = await startTestServer({ limits: { tenantsPerUser: 20 } });
    try {
      const ada = await wide.createUser('ada');
      const attempts = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          wide.call('/v1/tenants', { method: 'POST', apiKey: ada.apiKey, json: { name: `W${i}` } }),
        ),
      );
      expect(statuses(attempts)).toEqual([...Array<number>(20).fill(201), ...Array<number>(10).fill(409)]);
      const mine = (await (await wide.call('/v1/tenants', { apiKey: ada.apiKey })).json()).tenants;
      expect(mine.totalCount).toBe(20);
      expect(await countOwnedTenantsOf(wide.database, ada.id)).toBe(20);
    } finally {
      await wide.close();
    }
  });
});

describe('webhook endpoints per tenant', () => {
  it('refuses an endpoint over the cap with 409 webhook_endpoint_limit_reached, concurrent or not, until one is deleted', async () => {
    const ada = await server.createUser('ada');
    const tenantId = (await (await post(ada, '/v1/tenants', { name: 'Hooks' })).json()).tenant.id;
    const path = `/v1/tenants/${tenantId}/webhook-endpoints` as const;
    const attempts = await Promise.all(
      Array.from({ length: 5 }, (_, i) => post(ada, path, { url: `http://127.0.0.1:9/hook-${i}` })),
    );
    expect(statuses(attempts)).toEqual([201, 201, 409, 409, 409]);
    expect(await attempts.find((res) => res.status === 409)!.json()).toMatchObject({
      code: 'webhook_endpoint_limit_reached',
      detail: 'This tenant already has 2 webhook endpoints, the most allowed; delete one first.',
    });
    // Disabled endpoints count too.
    const first = (await attempts.find((res) => res.status === 201)!.json()).webhookEndpoint.id;
    const disabled = await server.call(`${path}/${first}`, {
      method: 'PATCH',
      apiKey: ada.apiKey,
      json: { enabled: false },
    });
    expect(disabled.status).toBe(200);
    expect((await post(ada, path, { url: 'http://127.0.0.1:9/more' })).status).toBe(409);
    expect((await server.call(`${path}/${first}`, { method: 'DELETE', apiKey: ada.apiKey })).status).toBe(204);
    expect((await post(ada, path, { url: 'http://127.0.0.1:9/after-delete' })).status).toBe(201);

    // Another tenant of the same owner has places of its own.
    const other = (await (await post(ada, '/v1/tenants', { name: 'Other' })).json()).tenant.id;
    expect((await post(ada, `/v1/tenants/${other}/webhook-endpoints`, { url: 'http://127.0.0.1:9/x' })).status).toBe(
      201,
    );
  });
});
