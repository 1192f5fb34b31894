import { newId } from '@works-api/prisma';
import { createRequest, createTenant, createWork, ok } from '../support/fixtures';
import { addMember, addNewMember } from '../support/roles';
import { startTestServer, type TestServer, type TestUser } from '../support/server';

/**
 * The Connection of every list: `limit` 1..100 (default 20), opaque `after` cursors, totalCount, edges
 * [{ cursor, node }], pageInfo { hasNextPage, endCursor }, newest first, and nothing skipped or repeated while
 * other items are being inserted.
 */
interface Edge {
  cursor: string;
  node: { id?: string; createdAt: string; user?: { id: string } };
}
interface Connection {
  totalCount: number;
  edges: Edge[];
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
}

let server: TestServer;
let ada: TestUser;

beforeAll(async () => {
  server = await startTestServer();
  ada = await server.createUser('ada');
});
afterAll(() => server.close());

async function page(
  user: TestUser,
  url: string,
  key: string,
  query: Record<string, string | number> = {},
): Promise<Connection> {
  const search = new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)]));
  const res = await server.call(`${url}${search.size > 0 ? `?${search.toString()}` : ''}`, { apiKey: user.apiKey });
  const body = await res.json<Record<string, Connection>>();
  if (res.status !== 200) throw new Error(`${url}: ${res.status} ${JSON.stringify(body)}`);
  expect(Object.keys(body)).toEqual([key]);
  return body[key]!;
}

/** The identity of a node: its id, or for a member the user's id. */
const idOf = (edge: Edge) => edge.node.id ?? edge.node.user!.id;

/** Checks the invariants of one page and returns its ids. */
function checkPage(connection: Connection, limit: number): string[] {
  expect(Object.keys(connection).sort()).toEqual(['edges', 'pageInfo', 'totalCount']);
  expect(connection.edges.length).toBeLessThanOrEqual(limit);
  for (const edge of connection.edges) expect(Object.keys(edge).sort()).toEqual(['cursor', 'node']);
  expect(connection.pageInfo.endCursor).toBe(connection.edges.at(-1)?.cursor ?? null);
  // Cursors are opaque: not the ids themselves.
  for (const edge of connection.edges) expect(edge.cursor).not.toContain(idOf(edge));
  if (connection.pageInfo.hasNextPage) expect(connection.edges).toHaveLength(limit);
  return connection.edges.map(idOf);
}

/** Newest first: creation times never increase along the list. */
function expectNewestFirst(edges: Edge[]): void {
  const times = edges.map((edge) => Date.parse(edge.node.createdAt));
  expect(times).toEqual([...times].sort((a, b) => b - a));
}

async function walk(user: TestUser, url: string, key: string, limit: number, between?: () => Promise<unknown>) {
  const edges: Edge[] = [];
  const totals: number[] = [];
  let after: string | undefined;
  let pages = 0;
  for (;;) {
    const query = { limit, ...(after && { after }) };
    // The first page is read before anything else happens; every later one races `between`.
    const [connection] = await Promise.all([page(user, url, key, query), pages > 0 ? between?.() : undefined]);
    pages++;
    checkPage(connection, limit);
    edges.push(...connection.edges);
    totals.push(connection.totalCount);
    if (!connection.pageInfo.hasNextPage) break;
    after = connection.pageInfo.endCursor!;
    if (pages > 1000) throw new Error('paging does not end');
  }
  return { edges, ids: edges.map(idOf), totals, pages };
}

describe('walking 250 works while another client inserts', () => {
  let tenantId: string;
  let writer: TestUser;
  let existing: string[];

  beforeAll(async () => {
    tenantId = (await createTenant(ada, 'Paging')).id;
    writer = await server.createUser('writer');
    await addMember(ada, tenantId, writer, 'member');
    // The 250 works that exist before the walks, written in one statement (through HTTP they would take
    // seconds on PGlite); ids come from the server's own generator, so they are time-ordered like any other.
    const owner = await server.database.prisma.user.findUniqueOrThrow({ where: { email: ada.email } });
    const works = Array.from({ length: 250 }, (_, i) => ({
      id: newId(),
      tenantId,
      slug: `work-${i}`,
      name: `Work ${i}`,
      ownerId: owner.id,
    }));
    await server.database.prisma.work.createMany({ data: works });
    existing = works
      .map((work) => work.id)
      .sort()
      .reverse();
  });

  it.each([7, 20, 100])('skips and repeats nothing with limit=%i', async (limit) => {
    const url = `/v1/tenants/${tenantId}/works`;
    // What the walk must see: the works as they are before it starts (earlier walks inserted some).
    const snapshot = (await walk(ada, url, 'works', 100)).ids;
    expect(snapshot.filter((id) => existing.includes(id))).toEqual(existing);
    let inserted = 0;
    const insert = async () => {
      await createWork(writer, tenantId, `Inserted while paging ${++inserted}`);
    };
    const { edges, ids, totals, pages } = await walk(ada, url, 'works', limit, insert);

    // Works inserted during the walk are newer than every cursor, so they land before the first page: the walk
    // sees exactly the works that existed when it started, each once, newest first.
    expect(ids).toEqual(snapshot);
    expectNewestFirst(edges);
    expect(pages).toBe(Math.ceil(snapshot.length / limit));
    expect(inserted).toBe(pages - 1);
    // totalCount counts the works of the moment: it grows with the inserts, never shrinks.
    expect(totals[0]).toBe(snapshot.length);
    expect(totals).toEqual([...totals].sort((a, b) => a - b));
    expect((await page(ada, url, 'works', { limit: 1 })).totalCount).toBe(snapshot.length + inserted);
  });

  it('returns 20 by default, and the next page continues exactly after endCursor', async () => {
    const url = `/v1/tenants/${tenantId}/works`;
    const first = await page(ada, url, 'works');
    expect(first.edges).toHaveLength(20);
    expect(first.pageInfo.hasNextPage).toBe(true);
    const second = await page(ada, url, 'works', { after: first.pageInfo.endCursor! });
    const all = await page(ada, url, 'works', { limit: 40 });
    expect([...first.edges, ...second.edges].map(idOf)).toEqual(all.edges.map(idOf));
  });

  it('embeds the first 20 kept works in the tenant, and its endCursor pages on in the works list', async () => {
    const { tenant } = ok(await ada.client.GET('/tenants/{tenant_id}', { params: { path: { tenant_id: tenantId } } }));
    const list = await page(ada, `/v1/tenants/${tenantId}/works`, 'works', { limit: 21 });
    expect(tenant.works.totalCount).toBe(list.totalCount);
    expect(tenant.works.edges).toEqual(list.edges.slice(0, 20));
    expect(tenant.works.pageInfo).toEqual({ hasNextPage: true, endCursor: list.edges[19]!.cursor });
    const next = await page(ada, `/v1/tenants/${tenantId}/works`, 'works', {
      limit: 1,
      after: tenant.works.pageInfo.endCursor!,
    });
    expect(next.edges[0]).toEqual(list.edges[20]);
  });
});

/** Every list operation, with a way to give it exactly five items. */
const lists: Array<{
  name: string;
  key: string;
  /** Makes a fresh list of five items and returns its URL and its owner. */
  setUp: () => Promise<{ url: string; user: TestUser; count: number }>;
}> = [
  {
    name: 'GET /tenants',
    key: 'tenants',
    setUp: async () => {
      const user = await server.createUser('tenants');
      for (let i = 0; i < 5; i++) await createTenant(user, `Tenant ${i}`);
      return { url: '/v1/tenants', user, count: 5 };
    },
  },
  {
    name: 'GET /api-keys',
    key: 'apiKeys',
    setUp: async () => {
      const user = await server.createUser('keys');
      for (let i = 0; i < 4; i++) ok(await user.client.POST('/api-keys', { body: { name: `Key ${i}` } }));
      return { url: '/v1/api-keys', user, count: 5 };
    },
  },
  {
    name: 'GET /tenants/{id}/members',
    key: 'members',
    setUp: async () => {
      const tenant = await createTenant(ada, 'Members');
      for (let i = 0; i < 4; i++) await addNewMember(server, ada, tenant.id, 'member', `paged-${i}`);
      return { url: `/v1/tenants/${tenant.id}/members`, user: ada, count: 5 };
    },
  },
  {
    name: 'GET /tenants/{id}/works',
    key: 'works',
    setUp: async () => {
      const tenant = await createTenant(ada, 'Works');
      for (let i = 0; i < 5; i++) await createWork(ada, tenant.id, `Work ${i}`);
      return { url: `/v1/tenants/${tenant.id}/works`, user: ada, count: 5 };
    },
  },
  {
    name: 'GET .../requests',
    key: 'requests',
    setUp: async () => {
      const tenant = await createTenant(ada, 'Requests');
      const work = await createWork(ada, tenant.id);
      for (let i = 0; i < 5; i++) await createRequest(ada, tenant.id, work.id);
      return { url: `/v1/tenants/${tenant.id}/works/${work.id}/requests`, user: ada, count: 5 };
    },
  },
  {
    name: 'GET .../requests/{id}/events',
    key: 'events',
    setUp: async () => {
      // A request makes at most two transitions: confirm, then validate.
      const tenant = await createTenant(ada, 'Events');
      const work = await createWork(ada, tenant.id);
      const request = await createRequest(ada, tenant.id, work.id);
      const path = { tenant_id: tenant.id, work_id: work.id, id: request.id };
      ok(await ada.client.PUT('/tenants/{tenant_id}/works/{work_id}/requests/{id}/confirm', { params: { path } }));
      ok(await ada.client.PUT('/tenants/{tenant_id}/works/{work_id}/requests/{id}/validate', { params: { path } }));
      return { url: `/v1/tenants/${tenant.id}/works/${work.id}/requests/${request.id}/events`, user: ada, count: 2 };
    },
  },
];

describe.each(lists.map((list) => [list.name, list] as const))('%s', (_, list) => {
  let url: string;
  let user: TestUser;
  let count: number;
  beforeAll(async () => {
    ({ url, user, count } = await list.setUp());
  });

  it('pages one item at a time, newest first, each exactly once, with the right totalCount', async () => {
    const { edges, ids, totals, pages } = await walk(user, url, list.key, 1);
    expect(pages).toBe(count);
    expect(new Set(ids).size).toBe(count);
    expect(totals.every((total) => total === count)).toBe(true);
    expectNewestFirst(edges);
    // Ids are time-ordered: newest first is also descending id order (members page by membership, not user).
    if (list.key !== 'members') expect(ids).toEqual([...ids].sort().reverse());
  });

  it('gives everything on one page when the limit allows, with no next page', async () => {
    const all = await page(user, url, list.key, { limit: 100 });
    checkPage(all, 100);
    expect(all.edges).toHaveLength(count);
    expect(all.pageInfo.hasNextPage).toBe(false);
    const byDefault = await page(user, url, list.key);
    expect(byDefault).toEqual(all);
  });

  it('ends with an empty page after the last item', async () => {
    const all = await page(user, url, list.key, { limit: 100 });
    const after = await page(user, url, list.key, { after: all.pageInfo.endCursor! });
    expect(after).toEqual({ totalCount: count, edges: [], pageInfo: { hasNextPage: false, endCursor: null } });
  });

  it.each([
    ['limit=0', 'validation_failed'],
    ['limit=101', 'validation_failed'],
    ['limit=abc', 'validation_failed'],
    ['after=', 'validation_failed'],
    ['after=bm90LWEtY3Vyc29y', 'invalid_cursor'],
  ])('refuses ?%s with 400 %s', async (query, code) => {
    const res = await server.call(`${url}?${query}`, { apiKey: user.apiKey });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect((await res.json()).code).toBe(code);
  });
});

it('gives an empty list an empty Connection', async () => {
  const user = await server.createUser('empty');
  expect(await page(user, '/v1/tenants', 'tenants')).toEqual({
    totalCount: 0,
    edges: [],
    pageInfo: { hasNextPage: false, endCursor: null },
  });
});

describe('a cursor is bound to the list that issued it', () => {
  let acme: string;
  let other: string;
  const problemOf = async (url: string, user = ada) => {
    const res = await server.call(url, { apiKey: user.apiKey });
    const body = await res.json<{ code: string; errors: Array<{ path: string; message: string }> }>();
    return { status: res.status, code: body.code, errors: body.errors };
  };
  const refused = {
    status: 400,
    code: 'invalid_cursor',
    errors: [
      {
        path: '/query/after',
        message: 'after must be the endCursor of a page of this same list, with the same filters',
      },
    ],
  };

  beforeAll(async () => {
    acme = (await createTenant(ada, 'Cursor One')).id;
    other = (await createTenant(ada, 'Cursor Two')).id;
    for (const tenant of [acme, other]) for (const name of ['A', 'B', 'C']) await createWork(ada, tenant, name);
  });

  it('pages on in its own list, and in the same list asked with its defaults spelt out', async () => {
    const first = await page(ada, `/v1/tenants/${acme}/works`, 'works', { limit: 1 });
    const next = await page(ada, `/v1/tenants/${acme}/works`, 'works', {
      limit: 1,
      discarded: 'false',
      after: first.pageInfo.endCursor!,
    });
    expect(next.edges).toHaveLength(1);
    expect(idOf(next.edges[0]!)).not.toBe(idOf(first.edges[0]!));
  });

  it('is refused by another list, another parent, other filters, and with the id of another page swapped in', async () => {
    const tenants = await page(ada, '/v1/tenants', 'tenants', { limit: 1 });
    expect(await problemOf(`/v1/tenants/${acme}/works?after=${tenants.pageInfo.endCursor}`)).toEqual(refused);
    const works = await page(ada, `/v1/tenants/${acme}/works`, 'works', { limit: 1 });
    expect(await problemOf(`/v1/tenants/${other}/works?after=${works.pageInfo.endCursor}`)).toEqual(refused);
    expect(await problemOf(`/v1/tenants/${acme}/works?discarded=all&after=${works.pageInfo.endCursor}`)).toEqual(
      refused,
    );
    expect(await problemOf(`/v1/tenants/${acme}/members?after=${works.pageInfo.endCursor}`)).toEqual(refused);
    // The first page of the tenant's works, embedded in the tenant, pages on in that tenant's works only.
    const { tenant } = ok(await ada.client.GET('/tenants/{tenant_id}', { params: { path: { tenant_id: acme } } }));
    expect(await problemOf(`/v1/tenants/${other}/works?after=${tenant.works.pageInfo.endCursor}`)).toEqual(refused);
  });

  it('is refused when forged: the unsigned kind of the previous version, or a real cursor altered', async () => {
    const works = await page(ada, `/v1/tenants/${acme}/works`, 'works', { limit: 1 });
    const forged = Buffer.from(`v1:${idOf(works.edges[0]!)}`).toString('base64url');
    expect(await problemOf(`/v1/tenants/${acme}/works?after=${forged}`)).toEqual(refused);
    const bytes = Buffer.from(works.pageInfo.endCursor!, 'base64url');
    bytes[16]! ^= 1; // the id's last byte: another work
    expect(await problemOf(`/v1/tenants/${acme}/works?after=${bytes.toString('base64url')}`)).toEqual(refused);
    expect(server.bugs).toEqual([]);
  });
});
