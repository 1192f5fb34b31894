import { countOwnedTenantsOf, deleteExpiredIdempotencyKeys } from '@works-api/prisma';
import {
  LARGE_DATASET_SHAPES,
  type LargeDataset,
  loadLargeDataset,
  nthNewestRequestId,
  sessionOf,
} from '@works-api/prisma/seed';
import { slugify } from '../../src/domain/slug';
import { cursorAt, startTestServer, type TestServer } from '../support/server';

/**
 * The large data set's loader (prisma/src/seed/large-dataset.ts), at its small shape: what it loads is valid for the
 * application, read through the API with the response validation of the tests on (every response is checked
 * against the contract), and is what the benchmark and the plan tests rely on: the heavy user's key works, its
 * lists have full pages and the counts the shape says, deep cursors land where they should, and the expired
 * rows are what the janitors delete.
 */
const shape = LARGE_DATASET_SHAPES.small;
let server: TestServer;
let data: LargeDataset;

interface Connection<Node> {
  totalCount: number;
  edges: Array<{ cursor: string; node: Node }>;
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
}
interface Tenant {
  id: string;
  name: string;
  slug: string;
  createdAt: string;
  members: { nodes: Array<{ role: string; user: { email: string } }> };
  works: Connection<{ id: string; name: string; discardedAt: string | null }>;
}
interface Request {
  id: string;
  title: string;
  status: string;
  validation: string | null;
  confirmedAt: string | null;
}

beforeAll(async () => {
  server = await startTestServer({
    // Only this file's history, should other tests share the database (PostgreSQL).
    webhooks: { manual: true, onlyTenants: () => (data ? [data.bigTenantId] : []) },
  });
  // Unique per run: on PostgreSQL every test file, and every earlier run, shares one database.
  const namespace = `t${Date.now().toString(36)}${process.pid.toString(36)}`;
  data = await loadLargeDataset(sessionOf(server.database), shape, { namespace });
}, 180_000);
afterAll(() => server.close());

async function get<T>(path: string): Promise<T> {
  const res = await server.call(path, { apiKey: data.heavyUser.apiKey });
  const body = await res.json();
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(body)}`);
  return body as T;
}

/** The time a UUIDv7 carries, in ms. */
const timeOfId = (id: string) => parseInt(id.replace(/-/g, '').slice(0, 12), 16);

test("the heavy user's API key authenticates; its revoked keys are listed", async () => {
  const { user } = await get<{ user: { id: string; email: string } }>('/v1/me');
  expect(user).toMatchObject({ id: data.heavyUser.id, email: data.heavyUser.email });
  const { apiKeys } = await get<{ apiKeys: Connection<{ id: string; revokedAt: string | null }> }>(
    '/v1/api-keys?limit=100',
  );
  expect(apiKeys.totalCount).toBe(data.counts.heavyUserApiKeys);
  expect(apiKeys.edges).toHaveLength(100);
  // The active key is the newest; the rest are revoked.
  expect(apiKeys.edges[0]!.node).toMatchObject({ id: data.heavyUser.apiKeyId, revokedAt: null });
  for (const { node } of apiKeys.edges.slice(1)) expect(node.revokedAt).not.toBeNull();
});

test("list tenants: the heavy user's tenants, full pages, newest first, slugs by the slug rules", async () => {
  const { tenants } = await get<{ tenants: Connection<Tenant> }>('/v1/tenants');
  expect(tenants.totalCount).toBe(shape.heavyUserTenants);
  expect(tenants.edges).toHaveLength(20);
  expect(tenants.pageInfo.hasNextPage).toBe(true);
  const times = tenants.edges.map((e) => Date.parse(e.node.createdAt));
  expect([...times].sort((a, b) => b - a)).toEqual(times);
  for (const { node } of tenants.edges) {
    expect(node.slug).toBe(slugify(node.name, 'tenant'));
    // Ids are UUIDv7 of the row's creation time, as keyset paging expects.
    expect(timeOfId(node.id)).toBe(Date.parse(node.createdAt));
    expect(node.members.nodes).toEqual([
      { role: 'owner', user: expect.objectContaining({ email: data.heavyUser.email }) },
    ]);
  }
  expect(tenants.edges[0]!.node.name).toBe(`Studio ${shape.heavyUserTenants} ${data.namespace}`);
});

test('get tenant: the big tenant with its members and its kept works; discarded works on request', async () => {
  const { tenant } = await get<{ tenant: Tenant }>(`/v1/tenants/${data.bigTenantId}`);
  expect(tenant.slug).toBe(`big-studio-${data.namespace}`);
  expect(tenant.works.totalCount).toBe(data.counts.bigTenantKeptWorks);
  expect(tenant.works.edges).toHaveLength(20);
  expect(tenant.works.edges[0]!.node).toMatchObject({ id: data.bigWorkId, name: 'Big work', discardedAt: null });
  expect(tenant.members.nodes).toHaveLength(data.counts.bigTenantMembers);
  expect(tenant.members.nodes.filter((m) => m.role === 'owner')).toHaveLength(1);
  expect(tenant.members.nodes.filter((m) => m.role === 'admin')).toHaveLength(Math.ceil(shape.bigTenantMembers / 10));

  const { works } = await get<{ works: Connection<{ discardedAt: string | null }> }>(
    `/v1/tenants/${data.bigTenantId}/works?discarded=true&limit=100`,
  );
  expect(works.totalCount).toBe(data.counts.bigTenantDiscardedWorks);
  expect(works.edges).toHaveLength(100);
  for (const { node } of works.edges) expect(node.discardedAt).not.toBeNull();
});

test("the big work's requests: counts by status, full pages, and a page deep in the list through its cursor", async () => {
  const base = `/v1/tenants/${data.bigTenantId}/works/${data.bigWorkId}/requests`;
  const all = await get<{ requests: Connection<Request> }>(base);
  expect(all.requests.totalCount).toBe(shape.bigWorkRequests);
  expect(all.requests.edges[0]!.node.title).toBe(`Request ${shape.bigWorkRequests}`);
  for (const status of ['pending', 'confirmed', 'validated', 'cancelled'] as const) {
    const { requests } = await get<{ requests: Connection<Request> }>(`${base}?status=${status}&limit=100`);
    expect(requests.totalCount).toBe(data.counts.bigWorkByStatus[status]);
    expect(requests.edges).toHaveLength(100);
    for (const { node } of requests.edges) expect(node.status).toBe(status);
  }

  // The 500th page of 20: after the 9,980th request, newest first.
  const session = sessionOf(server.database);
  const list = { operationId: 'listRequests', path: { tenant_id: data.bigTenantId, work_id: data.bigWorkId } };
  const after = cursorAt(server, list, await nthNewestRequestId(session, data.bigWorkId, 9_980));
  const deep = await get<{ requests: Connection<Request> }>(`${base}?after=${after}`);
  expect(deep.requests.edges.map((e) => e.node.title)).toEqual(
    Array.from({ length: 20 }, (_, i) => `Request ${shape.bigWorkRequests - 9_980 - i}`),
  );
  const pendingAfter = cursorAt(
    server,
    { ...list, query: { status: 'pending' } },
    await nthNewestRequestId(session, data.bigWorkId, 9_980, 'pending'),
  );
  const deepPending = await get<{ requests: Connection<Request> }>(`${base}?status=pending&after=${pendingAfter}`);
  expect(deepPending.requests.edges).toHaveLength(20);
  for (const { node } of deepPending.requests.edges) expect(node.status).toBe('pending');
});

test("the tenant's inbox past the count's cap: a capped count on the first page and on the pages after it", async () => {
  type Counted = Connection<Request> & { totalCountCapped: boolean };
  const base = `/v1/tenants/${data.bigTenantId}/requests?status=confirmed`;
  expect(data.counts.bigWorkByStatus.confirmed).toBeGreaterThan(1_000);
  const first = (await get<{ requests: Counted }>(base)).requests;
  expect(first).toMatchObject({ totalCount: 1_000, totalCountCapped: true });
  expect(first.edges).toHaveLength(20);
  const second = (await get<{ requests: Counted }>(`${base}&after=${first.pageInfo.endCursor}`)).requests;
  expect(second).toMatchObject({ totalCount: 1_000, totalCountCapped: true });
  expect(second.edges).toHaveLength(20);
  for (const { node } of [...first.edges, ...second.edges]) expect(node.status).toBe('confirmed');
  expect(timeOfId(second.edges[0]!.node.id)).toBeLessThanOrEqual(timeOfId(first.edges.at(-1)!.node.id));
});

test('a validated request carries the events of its transitions, in order', async () => {
  const { requests } = await get<{ requests: Connection<Request> }>(
    `/v1/tenants/${data.bigTenantId}/works/${data.bigWorkId}/requests?status=validated`,
  );
  const standard = requests.edges.find((e) => e.node.validation === 'standard')!.node;
  const early = requests.edges.find((e) => e.node.validation === 'early')!.node;
  const eventsOf = async (id: string) =>
    (
      await get<{ events: Connection<{ action: string; fromStatus: string; toStatus: string }> }>(
        `/v1/tenants/${data.bigTenantId}/works/${data.bigWorkId}/requests/${id}/events`,
      )
    ).events.edges.map((e) => `${e.node.action}:${e.node.fromStatus}->${e.node.toStatus}`);
  expect(standard.confirmedAt).not.toBeNull();
  expect((await eventsOf(standard.id)).sort()).toEqual(['confirm:pending->confirmed', 'validate:confirmed->validated']);
  expect(await eventsOf(early.id)).toEqual(['early_validate:pending->validated']);
});

test('the heavy user, owning more tenants than the cap, is refused another by its count, not by counting them', async () => {
  expect(await countOwnedTenantsOf(server.database, data.heavyUser.id)).toBe(shape.heavyUserTenants);
  const res = await server.call('/v1/tenants', {
    method: 'POST',
    apiKey: data.heavyUser.apiKey,
    json: { name: 'One more' },
  });
  expect(res.status).toBe(409);
  expect(await res.json()).toMatchObject({ code: 'tenant_limit_reached' });
});

test('a tenant with the popular name takes a slug none of the loaded ones has', async () => {
  const newcomer = await server.createUser('newcomer');
  const res = await server.call('/v1/tenants', {
    method: 'POST',
    apiKey: newcomer.apiKey,
    json: { name: data.popularName },
  });
  expect(res.status).toBe(201);
  const { tenant } = await res.json<{ tenant: Tenant }>();
  const suffix = new RegExp(`^${data.popularSlug}-(\\d+)$`).exec(tenant.slug);
  expect(Number(suffix?.[1])).toBeGreaterThan(shape.popularNameTenants);
});

test('the expired idempotency keys and the webhook history are what the janitors delete', async () => {
  const session = sessionOf(server.database);
  const expiredKeys = async () =>
    Number(
      (
        await session.query<{ n: string }>(
          'SELECT count(*) AS n FROM idempotency_keys WHERE scope = $1 AND expires_at <= now()',
          [data.heavyUser.id],
        )
      )[0]!.n,
    );
  expect(await expiredKeys()).toBe(shape.expiredIdempotencyKeys);
  while ((await deleteExpiredIdempotencyKeys(server.database, new Date(), 1000)) === 1000);
  expect(await expiredKeys()).toBe(0);

  const history = async () =>
    (
      await session.query<{ events: string; deliveries: string }>(
        `SELECT (SELECT count(*) FROM webhook_events WHERE tenant_id = $1::uuid) AS events,
                (SELECT count(*) FROM webhook_deliveries WHERE endpoint_id = $2::uuid) AS deliveries`,
        [data.bigTenantId, data.webhookEndpointId],
      )
    ).map((row) => [Number(row.events), Number(row.deliveries)])[0];
  expect(await history()).toEqual([shape.webhookHistory, shape.webhookHistory]);
  expect(await server.dispatcher!.cleanUp()).toBe(shape.webhookHistory);
  expect(await history()).toEqual([0, 0]);
});
