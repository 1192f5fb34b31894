import { createClient } from '@works-api/client';
import { freshEmail } from '../support/fixtures';
import { ADMIN_TOKEN, startTestServer, type TestServer } from '../support/server';
import { daysFromNow } from '../support/clock';

/**
 * The interface document's journey, driven only through packages/client, with every response checked against
 * the contract by the server: operator creates a user, who creates a tenant, a work and a request, and moves it.
 */
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

it('walks from a new user to a validated request', async () => {
  const operator = createClient({ baseUrl: server.baseUrl, apiKey: ADMIN_TOKEN });
  const created = await operator.POST('/admin/users', {
    body: { email: freshEmail('walk'), firstName: 'Grace', lastName: 'Hopper' },
  });
  expect(created.response.status).toBe(201);
  const secret = created.data!.apiKey.secret;

  const client = createClient({ baseUrl: server.baseUrl, apiKey: secret });
  const me = await client.GET('/me');
  expect(me.data?.user.firstName).toBe('Grace');

  const tenant = (await client.POST('/tenants', { body: { name: 'Walkthrough Ltd' } })).data!.tenant;
  expect(tenant.works).toEqual({ totalCount: 0, edges: [], pageInfo: { hasNextPage: false, endCursor: null } });

  const work = (
    await client.POST('/tenants/{tenant_id}/works', {
      params: { path: { tenant_id: tenant.id } },
      body: { name: 'Q3 report', description: 'Quarterly figures' },
    })
  ).data!.work;

  const dueAt = daysFromNow(30);
  const request = (
    await client.POST('/tenants/{tenant_id}/works/{work_id}/requests', {
      params: { path: { tenant_id: tenant.id, work_id: work.id } },
      body: { title: 'Confirm Q3 figures', recipient: { email: 'cfo@example.com' }, dueAt },
    })
  ).data!.request;
  expect(request).toMatchObject({ status: 'pending', dueAt });

  const path = { tenant_id: tenant.id, work_id: work.id, id: request.id };
  const confirmed = await client.PUT('/tenants/{tenant_id}/works/{work_id}/requests/{id}/confirm', {
    params: { path },
    body: { answer: 'Confirmed.' },
  });
  expect(confirmed.data).toMatchObject({ status: 'confirmed', answer: 'Confirmed.' });

  const validated = await client.PUT('/tenants/{tenant_id}/works/{work_id}/requests/{id}/validate', {
    params: { path },
  });
  expect(validated.data).toMatchObject({ status: 'validated', validation: 'standard' });

  const refused = await client.DELETE('/tenants/{tenant_id}/works/{work_id}/requests/{id}/cancel', {
    params: { path },
  });
  expect(refused.response.status).toBe(409);
  expect(refused.error).toMatchObject({ code: 'invalid_transition', currentStatus: 'validated', allowedActions: [] });
});
