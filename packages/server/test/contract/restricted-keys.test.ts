import { isInsufficientScope, requiredScopes, unwrap, type WorksApiClient } from '@works-api/client';
import { daysFromNow } from '../support/clock';
import { startTestServer, type TestServer } from '../support/server';
import { ContractRecorder, contractClient } from './support/contract';

/**
 * Restricted keys through the client, as a partner sets one up (issue 40): every response checked against the
 * contract on both sides. Its own file: the previous release's client (pnpm check:compat) runs contract.test.ts,
 * and knows neither the restrictions nor their 403.
 */
let server: TestServer;
const recorder = new ContractRecorder();
let ada: WorksApiClient;

beforeAll(async () => {
  server = await startTestServer();
  ada = contractClient(server.baseUrl, (await server.createUser('ada')).apiKey, recorder);
});
afterAll(() => server.close());

it('a key limited to one tenant and three scopes: reads and acts there, and is refused the rest in the words of the contract', async () => {
  const { tenant } = unwrap(await ada.createTenant({ body: { name: 'Bookkeeping client' } }));
  const { tenant: elsewhere } = unwrap(await ada.createTenant({ body: { name: 'Elsewhere' } }));
  const expiresAt = daysFromNow(90);
  const { apiKey } = unwrap(
    await ada.createApiKey({
      body: {
        name: 'Bookkeeping',
        tenants: [tenant.id],
        scopes: ['works:read', 'requests:read', 'requests:act'],
        expiresAt,
      },
    }),
  );
  expect(apiKey).toMatchObject({
    tenants: [tenant.id],
    scopes: ['works:read', 'requests:read', 'requests:act'],
    expiresAt,
  });
  const bookkeeping = contractClient(server.baseUrl, apiKey.secret, recorder);

  expect(unwrap(await bookkeeping.listWorks({ params: { path: { tenant_id: tenant.id } } })).works.totalCount).toBe(0);

  const refused = await bookkeeping.createWork({ params: { path: { tenant_id: tenant.id } }, body: { name: 'No' } });
  expect(refused.response.status).toBe(403);
  expect(refused.response.headers.get('WWW-Authenticate')).toBe(
    `Bearer error="insufficient_scope", scope="${requiredScopes.createWork}"`,
  );
  expect(isInsufficientScope(refused.error)).toBe(true);
  if (refused.error?.code !== 'insufficient_scope') throw new Error('expected insufficient_scope');
  expect(refused.error.scope).toBe('works:write');

  const outside = await bookkeeping.getWork({ params: { path: { tenant_id: elsewhere.id, work_id: tenant.id } } });
  expect([outside.response.status, outside.error?.code]).toEqual([404, 'not_found']);

  const keys = await bookkeeping.listApiKeys();
  expect([keys.response.status, keys.error?.code]).toEqual([403, 'insufficient_scope']);

  const listed = unwrap(await ada.listApiKeys());
  expect(listed.apiKeys.edges.find((edge) => edge.node.id === apiKey.id)?.node).toMatchObject({
    tenants: [tenant.id],
    expiresAt,
    lastUsedAt: expect.stringMatching(/:00\.000Z$/),
  });

  const bad = await ada.createApiKey({ body: { name: 'Too much', tenants: [tenant.id], scopes: ['account:manage'] } });
  expect([bad.response.status, bad.error?.code]).toEqual([400, 'validation_failed']);
  // Every answer above went through the contract check (a mismatch fails the call): the 403 among them.
  expect(recorder.calls).toContainEqual(expect.objectContaining({ operationId: 'createWork', status: 403 }));
});
