import { type ListOperationId, operationRoutes, unwrap } from '@works-api/client';
import { insertSession, newId } from '@works-api/prisma';
import { createRequest, createTenant, createWork, ok } from '../support/fixtures';
import { addNewMember, inviteEmail } from '../support/roles';
import { startTestServer, type TestServer, type TestUser } from '../support/server';

/**
 * `client.paginate` against the real server: every list operation of the contract pages through the same items a
 * single large page holds, in the same order, and stops where it is told to.
 */
let server: TestServer;
let ada: TestUser;
let tenantId: string;
let workId: string;
let requestId: string;
let endpointId: string;

beforeAll(async () => {
  server = await startTestServer();
  ada = await server.createUser('ada');
  const tenant = await createTenant(ada, 'Paging Inc');
  tenantId = tenant.id;
  for (let i = 1; i <= 7; i++) workId = (await createWork(ada, tenantId, `Work ${i}`)).id;
  for (let i = 1; i <= 3; i++) requestId = (await createRequest(ada, tenantId, workId)).id;
  const path = { tenant_id: tenantId, work_id: workId, id: requestId };
  ok(await ada.client.confirmRequest({ params: { path } }));
  ok(await ada.client.validateRequest({ params: { path } }));
  for (let i = 1; i <= 3; i++) await addNewMember(server, ada, tenantId, 'member', `paged-${i}`);
  for (let i = 1; i <= 3; i++) await inviteEmail(ada, tenantId, `invited-${i}-${tenantId}@example.com`, 'member');
  // Invitations to Ada herself, from three tenants of someone else.
  const inviter = await server.createUser('inviter');
  for (let i = 1; i <= 3; i++)
    await inviteEmail(inviter, (await createTenant(inviter, `Inviting ${i}`)).id, ada.email, 'member');
  for (let i = 1; i <= 2; i++) ok(await ada.client.createApiKey({ body: { name: `Key ${i}` } }));
  for (let i = 1; i <= 2; i++) await createTenant(ada, `Paging ${i}`);
  // Three signed-in browsers (sessions as a sign-in makes them; sessions.test.ts signs in by email).
  for (let i = 1; i <= 3; i++) {
    const now = new Date();
    await insertSession(server.database, {
      ...{ id: newId(), userId: (await ada.client.getMe()).data!.user.id, tokenHash: `${i}`.padStart(64, '0') },
      ...{ userAgent: `Browser ${i}`, now, expiresAt: new Date(now.getTime() + 86_400_000) },
      ...{ replacedTokenHash: null, maxPerUser: 50 },
    });
  }
  // Webhook endpoints, and test deliveries to the last one (nothing sends them: no dispatcher runs here).
  for (let i = 1; i <= 3; i++) {
    endpointId = ok(
      await ada.client.createWebhookEndpoint({
        params: { path: { tenant_id: tenantId } },
        body: { url: `http://127.0.0.1:9/hooks/${i}` },
      }),
    ).webhookEndpoint.id;
  }
  for (let i = 1; i <= 3; i++)
    ok(await ada.client.testWebhookEndpoint({ params: { path: { tenant_id: tenantId, endpoint_id: endpointId } } }));
}, 120_000);
afterAll(() => server.close());

const listOperations = Object.entries(operationRoutes)
  .filter(([, route]) => 'list' in route)
  .map(([operationId]) => operationId as ListOperationId);

/** Values for the path parameters of every list, by name: a list with another parameter needs one added here. */
const pathValues = (): Record<string, string> => ({
  tenant_id: tenantId,
  work_id: workId,
  id: requestId,
  endpoint_id: endpointId,
});
function pathOf(operationId: ListOperationId): Record<string, string> {
  const names = [...operationRoutes[operationId].path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]!);
  const unknown = names.filter((name) => !(name in pathValues()));
  if (unknown.length > 0)
    throw new Error(`${operationId}: add a fixture for the path parameter(s) ${unknown.join(', ')}`);
  return Object.fromEntries(names.map((name) => [name, pathValues()[name]!]));
}

/** What one call with the largest page returns, as ids (a member's is its user's). */
async function onePage(operationId: ListOperationId): Promise<string[]> {
  const route = operationRoutes[operationId];
  const call = ada.client[operationId] as (
    init: object,
  ) => Promise<{ data?: unknown; error?: unknown; response: Response }>;
  const data = unwrap(
    await call({ params: { path: pathOf(operationId), query: { limit: route.list.maxPageSize } } }),
  ) as Record<string, { edges: Array<{ node: unknown }>; pageInfo: { hasNextPage: boolean } }>;
  const page = data[route.list.connection]!;
  expect(page.pageInfo.hasNextPage).toBe(false);
  return page.edges.map(({ node }) => idOf(node));
}
const idOf = (node: unknown) => {
  const { id, user } = node as { id?: string; user?: { id: string } };
  return id ?? user!.id;
};

const requestsTo = (route: string) =>
  server.logs.filter((line) => line.msg === 'request' && line.route === `/v1${route}`).length;

describe('paginate', () => {
  it('knows every list operation of the contract', () => {
    expect(listOperations.sort()).toEqual([
      'listApiKeys',
      'listEvents',
      'listInvitations',
      'listMembers',
      'listMyInvitations',
      'listRequestEvents',
      'listRequests',
      'listSessions',
      'listTenantRequests',
      'listTenants',
      'listWebhookDeliveries',
      'listWebhookEndpoints',
      'listWorks',
    ]);
  });

  it.each(listOperations)(
    '%s: yields what one large page holds, in order, a page of 1 at a time',
    async (operationId) => {
      const expected = await onePage(operationId);
      expect(expected.length).toBeGreaterThan(1);
      const before = requestsTo(operationRoutes[operationId].path);
      const ids: string[] = [];
      const paginate = ada.client.paginate as (id: ListOperationId, options: object) => AsyncGenerator<unknown>;
      for await (const node of paginate(operationId, { params: { path: pathOf(operationId) }, pageSize: 1 }))
        ids.push(idOf(node));
      expect(ids).toEqual(expected);
      // One request per item, and none after the last page said there was no next one.
      expect(requestsTo(operationRoutes[operationId].path) - before).toBe(expected.length);
    },
  );

  it('stops after `limit` items and passes the list’s own query parameters', async () => {
    const params = { path: { tenant_id: tenantId } };
    const firstFour: string[] = [];
    for await (const work of ada.client.paginate('listWorks', { params, pageSize: 3, limit: 4 }))
      firstFour.push(work.name);
    expect(firstFour).toEqual(['Work 7', 'Work 6', 'Work 5', 'Work 4']);

    ok(await ada.client.discardWork({ params: { path: { tenant_id: tenantId, work_id: workId } } }));
    const kept: string[] = [];
    for await (const work of ada.client.paginate('listWorks', { params, pageSize: 2 })) kept.push(work.name);
    expect(kept).toEqual(['Work 6', 'Work 5', 'Work 4', 'Work 3', 'Work 2', 'Work 1']);
    const discarded: string[] = [];
    for await (const work of ada.client.paginate('listWorks', {
      params: { ...params, query: { discarded: 'true' } },
    })) {
      discarded.push(work.name);
    }
    expect(discarded).toEqual(['Work 7']);
  });

  it('throws the problem of a refused page', async () => {
    const walk = async () => {
      for await (const work of ada.client.paginate('listWorks', { params: { path: { tenant_id: 'no-such-tenant' } } }))
        void work;
    };
    await expect(walk()).rejects.toMatchObject({ name: 'ProblemError', code: 'not_found', status: 404 });
  });
});
