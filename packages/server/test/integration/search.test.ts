import type { components } from '@works-api/client';
import { createTenant, ok } from '../support/fixtures';
import { addMember } from '../support/roles';
import { startTestServer, type TestServer, type TestUser } from '../support/server';

type Schemas = components['schemas'];

/**
 * Search (`q`), the tenant-wide request list and the events feed: what they match, what they leave out (other
 * tenants, discarded works, test events), and the 400s of bad input.
 */
let server: TestServer;
let owner: TestUser;
let member: TestUser;
let stranger: TestUser;
let tenant: Schemas['Tenant'];
let other: Schemas['Tenant'];
let report: Schemas['Work'];
let contracts: Schemas['Work'];
let discarded: Schemas['Work'];
const sent: Record<string, Schemas['Request']> = {};

async function work(user: TestUser, tenantId: string, name: string, description = ''): Promise<Schemas['Work']> {
  return ok(
    await user.client.POST('/tenants/{tenant_id}/works', {
      params: { path: { tenant_id: tenantId } },
      body: { name, description },
    }),
  ).work;
}

async function request(
  user: TestUser,
  tenantId: string,
  workId: string,
  body: Schemas['CreateRequestBody'],
): Promise<Schemas['Request']> {
  return ok(
    await user.client.POST('/tenants/{tenant_id}/works/{work_id}/requests', {
      params: { path: { tenant_id: tenantId, work_id: workId } },
      body,
    }),
  ).request;
}

beforeAll(async () => {
  server = await startTestServer();
  [owner, member, stranger] = await Promise.all([
    server.createUser('owner'),
    server.createUser('member'),
    server.createUser('stranger'),
  ]);
  tenant = await createTenant(owner, 'Search Studio');
  other = await createTenant(stranger, 'Other Studio');
  await addMember(owner, tenant.id, member, 'member');
  report = await work(owner, tenant.id, 'Rapport financier Été', 'Les chiffres du troisième trimestre.');
  contracts = await work(owner, tenant.id, 'Contracts Q3');
  discarded = await work(owner, tenant.id, 'Rapport annuel');
  const soon = new Date(Date.now() + 60 * 60_000).toISOString();
  const later = new Date(Date.now() + 30 * 24 * 60 * 60_000).toISOString();
  sent.grace = await request(owner, tenant.id, report.id, {
    title: 'Confirm the figures',
    message: 'Section 3, please.',
    recipient: { email: 'Grace.Hopper@Example.com', firstName: 'Grâce', lastName: 'Hopper' },
    dueAt: soon,
  });
  sent.ada = await request(member, tenant.id, contracts.id, {
    title: 'Sign the contract',
    recipient: { email: 'ada@example.com', firstName: 'Ada' },
    dueAt: later,
  });
  sent.inDiscarded = await request(owner, tenant.id, discarded.id, {
    title: 'Confirm the annual figures',
    recipient: { email: 'grace.hopper@example.com' },
  });
  ok(
    await owner.client.DELETE('/tenants/{tenant_id}/works/{work_id}', {
      params: { path: { tenant_id: tenant.id, work_id: discarded.id } },
    }),
  );
  // The same words in another tenant: never found from this one.
  const foreign = await work(stranger, other.id, 'Rapport financier Été');
  sent.foreign = await request(stranger, other.id, foreign.id, {
    title: 'Confirm the figures',
    recipient: { email: 'grace.hopper@example.com' },
  });
  // A confirmed one, waiting for validation.
  ok(
    await owner.client.PUT('/tenants/{tenant_id}/works/{work_id}/requests/{id}/confirm', {
      params: { path: { tenant_id: tenant.id, work_id: contracts.id, id: sent.ada.id } },
      body: { answer: 'Signed.' },
    }),
  );
}, 120_000);
afterAll(() => server.close());

const worksFound = async (user: TestUser, q: string, discardedFilter?: 'all') =>
  ok(
    await user.client.GET('/tenants/{tenant_id}/works', {
      params: { path: { tenant_id: tenant.id }, query: { q, ...(discardedFilter && { discarded: discardedFilter }) } },
    }),
  ).works.edges.map((edge) => edge.node.name);

const inbox = async (user: TestUser, query: Record<string, string>) =>
  ok(
    await user.client.GET('/tenants/{tenant_id}/requests', {
      params: { path: { tenant_id: tenant.id }, query },
    }),
  ).requests;

const titles = (connection: Schemas['RequestConnection']) => connection.edges.map((edge) => edge.node.title);

describe('q on the works list', () => {
  it('every word must match the start of a word, ignoring case and accents', async () => {
    expect(await worksFound(owner, 'rapport ete')).toEqual(['Rapport financier Été']);
    expect(await worksFound(owner, 'RAP FIN')).toEqual(['Rapport financier Été']);
    expect(await worksFound(member, 'troisieme')).toEqual(['Rapport financier Été']);
    expect(await worksFound(owner, 'q3')).toEqual(['Contracts Q3']);
    expect(await worksFound(owner, 'contracts-q3')).toEqual(['Contracts Q3']);
  });

  it('a word inside another word does not match (prefix matching)', async () => {
    expect(await worksFound(owner, 'port')).toEqual([]);
    expect(await worksFound(owner, 'rapport hiver')).toEqual([]);
  });

  it('searches the slug too, and the discarded works only when asked', async () => {
    expect(await worksFound(owner, 'rapport')).toEqual(['Rapport financier Été']);
    expect((await worksFound(owner, 'rapport', 'all')).sort()).toEqual(['Rapport annuel', 'Rapport financier Été']);
  });

  it('a word longer than the prefixes kept matches by its whole start; discarded works alone when asked', async () => {
    await work(owner, tenant.id, 'Internationalisation Plan');
    expect(await worksFound(owner, 'internationalisation')).toEqual(['Internationalisation Plan']);
    expect(await worksFound(owner, 'internationalisat plan')).toEqual(['Internationalisation Plan']);
    // The same first 16 letters (what the index keeps), another ending: checked against the text itself.
    expect(await worksFound(owner, 'internationalisatxon')).toEqual([]);
    const discardedOnly = ok(
      await owner.client.GET('/tenants/{tenant_id}/works', {
        params: { path: { tenant_id: tenant.id }, query: { q: 'rapport', discarded: 'true' } },
      }),
    ).works;
    expect(discardedOnly.edges.map((edge) => edge.node.name)).toEqual(['Rapport annuel']);
    expect(discardedOnly).toMatchObject({ totalCount: 1, totalCountCapped: false });
  });

  it('a renamed work is found by its new name, not its old one', async () => {
    const renamed = await work(owner, tenant.id, 'Brouillon');
    ok(
      await owner.client.PATCH('/tenants/{tenant_id}/works/{work_id}', {
        params: { path: { tenant_id: tenant.id, work_id: renamed.id } },
        body: { name: 'Budget prévisionnel' },
      }),
    );
    expect(await worksFound(owner, 'previsionnel')).toEqual(['Budget prévisionnel']);
    // The slug keeps the first name, and the slug is searched too.
    expect(await worksFound(owner, 'brouillon')).toEqual(['Budget prévisionnel']);
  });
});

describe('q on the requests of a work', () => {
  it('searches title, message and the recipient', async () => {
    const path = { tenant_id: tenant.id, work_id: report.id };
    for (const q of ['confirm figures', 'section', 'grace', 'GRACE.HOPPER', 'example.com', 'hopper'])
      expect(
        titles(
          ok(
            await owner.client.GET('/tenants/{tenant_id}/works/{work_id}/requests', { params: { path, query: { q } } }),
          ).requests,
        ),
      ).toEqual(['Confirm the figures']);
  });
});

describe('the tenant-wide request list', () => {
  it('lists the requests of every kept work, newest first, with an exact count below the cap', async () => {
    const all = await inbox(member, {});
    expect(titles(all)).toEqual(['Sign the contract', 'Confirm the figures']);
    expect(all).toMatchObject({ totalCount: 2, totalCountCapped: false });
  });

  it('filters by status, recipient, work, due dates and q', async () => {
    expect(titles(await inbox(owner, { status: 'confirmed' }))).toEqual(['Sign the contract']);
    expect(titles(await inbox(owner, { status: 'pending,confirmed' }))).toHaveLength(2);
    expect(titles(await inbox(owner, { recipient: 'GRACE.hopper@example.COM' }))).toEqual(['Confirm the figures']);
    expect(titles(await inbox(owner, { recipient: 'hopper@example.com' }))).toEqual([]);
    expect(titles(await inbox(owner, { workId: contracts.id }))).toEqual(['Sign the contract']);
    const inADay = new Date(Date.now() + 24 * 60 * 60_000).toISOString();
    expect(titles(await inbox(owner, { dueBefore: inADay }))).toEqual(['Confirm the figures']);
    expect(titles(await inbox(owner, { dueAfter: inADay }))).toEqual(['Sign the contract']);
    expect(titles(await inbox(owner, { q: 'grace figures' }))).toEqual(['Confirm the figures']);
    expect(titles(await inbox(owner, { q: 'grace', status: 'confirmed' }))).toEqual([]);
  });

  it('overdue: pending with a due date already past', async () => {
    expect(titles(await inbox(owner, { status: 'pending', dueBefore: new Date().toISOString() }))).toEqual([]);
  });

  it('never shows another tenant’s requests, and a work of another tenant finds nothing', async () => {
    expect(titles(await inbox(owner, { q: 'confirm' }))).toEqual(['Confirm the figures']);
    expect(titles(await inbox(owner, { workId: sent.foreign!.workId }))).toEqual([]);
    const theirs = ok(
      await stranger.client.GET('/tenants/{tenant_id}/requests', { params: { path: { tenant_id: other.id } } }),
    ).requests;
    expect(theirs.edges.map((edge) => edge.node.id)).toEqual([sent.foreign!.id]);
    const refused = await stranger.client.GET('/tenants/{tenant_id}/requests', {
      params: { path: { tenant_id: tenant.id } },
    });
    expect(refused.response.status).toBe(404);
  });

  it('pages with cursors bound to the filters', async () => {
    const first = await inbox(owner, { limit: '1' });
    expect(first.pageInfo.hasNextPage).toBe(true);
    // A full page is counted by its own statement: still exact under the cap.
    expect(first).toMatchObject({ totalCount: 2, totalCountCapped: false });
    const second = await inbox(owner, { limit: '1', after: first.pageInfo.endCursor! });
    expect(titles(second)).toEqual(['Confirm the figures']);
    // A page after a cursor is counted too, over the whole list (not from the cursor on).
    expect(second).toMatchObject({ totalCount: 2, totalCountCapped: false });
    const otherFilter = await owner.client.GET('/tenants/{tenant_id}/requests', {
      params: { path: { tenant_id: tenant.id }, query: { status: 'pending', after: first.pageInfo.endCursor! } },
    });
    expect(otherFilter.response.status).toBe(400);
  });
});

describe('bad input is a 400 that says what is wrong', () => {
  it.each([
    ['/works', { q: '!!!' }, 'q must contain a letter or a digit'],
    ['/works', { q: 'a b c d e f g h i' }, 'q must have at most 8 words'],
    ['/works', { q: 'x'.repeat(201) }, 'q must be at most 200 characters'],
    ['/requests', { status: 'pending,done' }, 'must be request statuses separated by commas'],
    ['/requests', { recipient: 'not-an-email' }, 'must be an email address'],
    ['/requests', { dueBefore: '2026-02-30T10:00:00Z' }, 'must be a real date and time'],
    ['/requests', { workId: 'x'.repeat(65) }, 'workId must be at most 64 characters'],
    ['/events', { type: 'webhook_endpoint.test' }, 'must be event types separated by commas'],
  ])('GET %s %j', async (list, query, message) => {
    // As a browser form and curl users send it: spaces as `+`, commas and `@` as they are.
    const response = await fetch(
      `${server.baseUrl}/v1/tenants/${tenant.id}${list}?${new URLSearchParams(query).toString()}`,
      {
        headers: { authorization: `Bearer ${owner.apiKey}` },
      },
    );
    expect(response.status).toBe(400);
    expect(JSON.stringify(await response.json())).toContain(message);
  });

  it('takes a query as a browser form or curl sends it: `+` for spaces, commas and `@` unencoded', async () => {
    const response = await fetch(
      `${server.baseUrl}/v1/tenants/${tenant.id}/requests?q=confirm+figures&status=pending,confirmed&recipient=grace.hopper@example.com`,
      { headers: { authorization: `Bearer ${owner.apiKey}` } },
    );
    expect(response.status).toBe(200);
    const body = (await response.json()) as { requests: Schemas['RequestConnection'] };
    expect(titles(body.requests)).toEqual(['Confirm the figures']);
  });
});

describe('the events feed', () => {
  it('holds every event the webhooks send, newest first, with the webhook’s own body, without an endpoint', async () => {
    const { events } = ok(
      await member.client.GET('/tenants/{tenant_id}/events', { params: { path: { tenant_id: tenant.id } } }),
    );
    const types = events.edges.map((edge) => edge.node.type);
    expect(types).toEqual([
      'request.confirmed',
      'work.discarded',
      'request.created',
      'request.created',
      'request.created',
      'member.added',
    ]);
    const created = events.edges.find(
      (edge) => edge.node.type === 'request.created' && edge.node.data.request.id === sent.grace!.id,
    );
    expect(created!.node.data).toEqual({ request: sent.grace });
    expect(events.edges.every((edge) => edge.node.tenantId === tenant.id)).toBe(true);
  });

  it('filters by one or more types', async () => {
    const { events } = ok(
      await owner.client.GET('/tenants/{tenant_id}/events', {
        params: { path: { tenant_id: tenant.id }, query: { type: 'work.discarded,request.confirmed' } },
      }),
    );
    expect(events.edges.map((edge) => edge.node.type)).toEqual(['request.confirmed', 'work.discarded']);
  });

  it('is 404 to a non-member', async () => {
    const refused = await stranger.client.GET('/tenants/{tenant_id}/events', {
      params: { path: { tenant_id: tenant.id } },
    });
    expect(refused.response.status).toBe(404);
  });
});
