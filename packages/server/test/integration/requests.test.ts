import { createTenant, createWork } from '../support/fixtures';
import { addMember } from '../support/roles';
import { startTestServer, type TestServer, type TestUser } from '../support/server';
import { daysFromNow, withOffset } from '../support/clock';

/** Requests: create, get, list with ?status=, the four actions, and their events. */
let server: TestServer;
let ada: TestUser;
let mia: TestUser;
let worksUrl: `/v1/tenants/${string}/works`;
type WorkUrl = `/v1/tenants/${string}/works/${string}`;
type RequestUrl = `${WorkUrl}/requests/${string}`;

beforeAll(async () => {
  server = await startTestServer();
  [ada, mia] = await Promise.all([server.createUser('ada'), server.createUser('mia')]);
  const tenant = await createTenant(ada, 'Requests');
  await addMember(ada, tenant.id, mia, 'member');
  worksUrl = `/v1/tenants/${tenant.id}/works`;
});
afterAll(() => server.close());

const iso = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

async function newWork(): Promise<WorkUrl> {
  return `${worksUrl}/${(await createWork(ada, worksUrl.split('/')[3]!, 'Work')).id}`;
}

async function send(
  workUrl: WorkUrl,
  by = ada,
  body: object = { title: 'Confirm the figures', recipient: { email: 'rae@example.com' } },
): Promise<RequestUrl> {
  const res = await server.callAs(by, 'POST', `${workUrl}/requests`, body);
  expect(res.status).toBe(201);
  return `${workUrl}/requests/${res.body.request.id}`;
}

const act = (user: TestUser, requestUrl: RequestUrl, action: string, json?: unknown) =>
  server.callAs(user, action === 'cancel' ? 'DELETE' : 'PUT', `${requestUrl}/${action}`, json);

const eventsOf = async (requestUrl: RequestUrl) =>
  (await server.callAs(ada, 'GET', `${requestUrl}/events`)).body.events;

describe('POST .../requests', () => {
  it('creates a pending request with every field, a Location, and no event', async () => {
    const workUrl = await newWork();
    const dueAt = daysFromNow(30);
    const res = await server.callAs(mia, 'POST', `${workUrl}/requests`, {
      title: '  Confirm Q3  ',
      message: 'Section 3, please.\n',
      recipient: { email: 'Grace@Example.com', firstName: ' Grace ', lastName: 'Hopper' },
      dueAt: withOffset(dueAt, 1),
    });
    expect(res.status).toBe(201);
    const { request } = res.body;
    expect(Object.keys(res.body)).toEqual(['request']);
    expect(res.headers.get('location')).toBe(`${workUrl}/requests/${request.id}`);
    expect(request).toEqual({
      id: expect.any(String),
      workId: workUrl.split('/').at(-1),
      status: 'pending',
      title: 'Confirm Q3',
      message: 'Section 3, please.\n',
      recipient: { email: 'grace@example.com', firstName: 'Grace', lastName: 'Hopper' },
      answer: null,
      validation: null,
      cancelReason: null,
      dueAt,
      owner: { firstName: 'mia', lastName: 'Tester', email: mia.email },
      createdAt: expect.stringMatching(iso),
      updatedAt: request.createdAt,
      confirmedAt: null,
      validatedAt: null,
      cancelledAt: null,
      // No mail sender runs in this file: the email stays queued (test/integration/recipients.test.ts sends it).
      emailDelivery: { status: 'queued', lastSentAt: null, failure: null },
      emailsStopped: false,
      confirmedThroughDevMailbox: false,
    });
    expect((await server.callAs(ada, 'GET', `${workUrl}/requests/${request.id}`)).body).toEqual({ request });
    expect(await eventsOf(`${workUrl}/requests/${request.id}`)).toEqual({
      totalCount: 0,
      edges: [],
      pageInfo: { hasNextPage: false, endCursor: null },
    });
  });

  it('defaults message and recipient names to empty strings, and dueAt to null', async () => {
    const requestUrl = await send(await newWork(), ada, { title: 'T', recipient: { email: 'r@example.com' } });
    expect((await server.callAs(ada, 'GET', requestUrl)).body.request).toMatchObject({
      message: '',
      recipient: { email: 'r@example.com', firstName: '', lastName: '' },
      dueAt: null,
    });
  });
});

describe('the four actions', () => {
  it('confirm → validate: statuses, timestamps, answer, and one event per transition (newest first)', async () => {
    const requestUrl = await send(await newWork());
    const confirmed = await act(mia, requestUrl, 'confirm', { answer: 'The figures are right.' });
    expect(confirmed.status).toBe(200);
    // The actions return the Request itself, not wrapped.
    expect(confirmed.body).toMatchObject({
      status: 'confirmed',
      answer: 'The figures are right.',
      confirmedAt: expect.stringMatching(iso),
      validation: null,
    });
    expect(confirmed.body.updatedAt).toBe(confirmed.body.confirmedAt);

    const validated = await act(ada, requestUrl, 'validate');
    expect(validated.body).toMatchObject({
      status: 'validated',
      validation: 'standard',
      validatedAt: expect.stringMatching(iso),
      answer: 'The figures are right.',
      confirmedAt: confirmed.body.confirmedAt,
      cancelledAt: null,
    });
    expect((await server.callAs(ada, 'GET', requestUrl)).body.request).toEqual(validated.body);

    const events = await eventsOf(requestUrl);
    expect(events.totalCount).toBe(2);
    expect(events.edges.map((edge: { node: unknown }) => edge.node)).toEqual([
      {
        id: expect.any(String),
        action: 'validate',
        fromStatus: 'confirmed',
        toStatus: 'validated',
        actor: { firstName: 'ada', lastName: 'Tester', email: ada.email },
        actorType: 'user',
        throughDevMailbox: false,
        note: null,
        createdAt: validated.body.validatedAt,
      },
      {
        id: expect.any(String),
        action: 'confirm',
        fromStatus: 'pending',
        toStatus: 'confirmed',
        actor: { firstName: 'mia', lastName: 'Tester', email: mia.email },
        actorType: 'user',
        throughDevMailbox: false,
        note: 'The figures are right.',
        createdAt: confirmed.body.confirmedAt,
      },
    ]);
  });

  it('early_validate from pending sets validation "early"; cancel keeps its reason in the request and the event', async () => {
    const early = await act(ada, await send(await newWork()), 'early_validate');
    expect(early.body).toMatchObject({ status: 'validated', validation: 'early', confirmedAt: null });

    const requestUrl = await send(await newWork());
    await act(ada, requestUrl, 'confirm');
    const cancelled = await act(mia, requestUrl, 'cancel', { reason: 'Sent to the wrong person.' });
    expect(cancelled.body).toMatchObject({
      status: 'cancelled',
      cancelReason: 'Sent to the wrong person.',
      cancelledAt: expect.stringMatching(iso),
      answer: null,
      validation: null,
    });
    const [latest] = (await eventsOf(requestUrl)).edges;
    expect(latest!.node).toMatchObject({
      action: 'cancel',
      fromStatus: 'confirmed',
      toStatus: 'cancelled',
      note: 'Sent to the wrong person.',
    });
  });

  it('answers a repeat of the action that produced the state with 200 and the request unchanged, and no event', async () => {
    const requestUrl = await send(await newWork());
    const first = await act(ada, requestUrl, 'confirm', { answer: 'First' });
    const repeat = await act(mia, requestUrl, 'confirm', { answer: 'Second' });
    expect(repeat.status).toBe(200);
    expect(repeat.body).toEqual(first.body);

    const validated = await act(ada, requestUrl, 'early_validate');
    expect((await act(ada, requestUrl, 'early_validate')).body).toEqual(validated.body);
    expect((await eventsOf(requestUrl)).totalCount).toBe(2);
  });

  it.each([
    ['pending', 'validate', ['confirm', 'early_validate', 'cancel']],
    ['validated (standard)', 'early_validate', []],
    ['validated (standard)', 'cancel', []],
    ['validated (early)', 'validate', []],
    ['validated (early)', 'confirm', []],
    ['cancelled', 'validate', []],
    ['cancelled', 'confirm', []],
  ])(
    'refuses from %s the action %s: 409 invalid_transition with currentStatus and allowedActions',
    async (state, action, allowed) => {
      const requestUrl = await send(await newWork());
      const setUp: Record<string, string[]> = {
        pending: [],
        confirmed: ['confirm'],
        'validated (standard)': ['confirm', 'validate'],
        'validated (early)': ['early_validate'],
        cancelled: ['cancel'],
      };
      for (const step of setUp[state]!) expect((await act(ada, requestUrl, step)).status).toBe(200);
      const before = (await server.callAs(ada, 'GET', requestUrl)).body.request;
      const eventsBefore = (await eventsOf(requestUrl)).totalCount;

      const res = await act(mia, requestUrl, action);
      expect(res.status).toBe(409);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(res.body).toMatchObject({
        code: 'invalid_transition',
        status: 409,
        currentStatus: before.status,
        allowedActions: allowed,
      });
      expect((await server.callAs(ada, 'GET', requestUrl)).body.request).toEqual(before);
      expect((await eventsOf(requestUrl)).totalCount).toBe(eventsBefore);
    },
  );

  it('answers 404 for a request through another work of the same tenant', async () => {
    const requestUrl = await send(await newWork());
    const otherWork = await newWork();
    const elsewhere = `${otherWork}/requests/${requestUrl.split('/').at(-1)}`;
    for (const [method, suffix] of [
      ['GET', ''],
      ['GET', '/events'],
      ['PUT', '/confirm'],
      ['DELETE', '/cancel'],
    ] as const) {
      const res = await server.callAs(ada, method, `${elsewhere}${suffix}`);
      expect([suffix, res.status, res.body.code]).toEqual([suffix, 404, 'not_found']);
    }
    expect((await server.callAs(ada, 'GET', requestUrl)).body.request.status).toBe('pending');
  });
});

describe('GET .../requests', () => {
  it('filters by ?status=, totalCount counting only the matches, newest first', async () => {
    const workUrl = await newWork();
    const urls: Record<string, string[]> = { pending: [], confirmed: [], validated: [], cancelled: [] };
    const steps: Record<string, string[]> = {
      pending: [],
      confirmed: ['confirm'],
      validated: ['early_validate'],
      cancelled: ['cancel'],
    };
    for (let i = 0; i < 2; i++) {
      for (const status of Object.keys(urls)) {
        const requestUrl = await send(workUrl);
        for (const step of steps[status]!) await act(ada, requestUrl, step);
        urls[status]!.push(requestUrl);
      }
    }
    const idOf = (url: string) => url.split('/').at(-1);
    const all = (await server.callAs(mia, 'GET', `${workUrl}/requests`)).body.requests;
    expect(all.totalCount).toBe(8);
    for (const [status, made] of Object.entries(urls)) {
      const { body } = await server.callAs(mia, 'GET', `${workUrl}/requests?status=${status}`);
      expect(body.requests.totalCount).toBe(2);
      expect(body.requests.edges.map((edge: { node: { id: string } }) => edge.node.id)).toEqual(
        made.map(idOf).reverse(),
      );
      expect(body.requests.edges.every((edge: { node: { status: string } }) => edge.node.status === status)).toBe(true);
      // Paging within a filter stays within it.
      const firstPage = (await server.callAs(mia, 'GET', `${workUrl}/requests?status=${status}&limit=1`)).body.requests;
      const next = (
        await server.callAs(
          mia,
          'GET',
          `${workUrl}/requests?status=${status}&limit=1&after=${firstPage.pageInfo.endCursor}`,
        )
      ).body.requests;
      expect([...firstPage.edges, ...next.edges].map((edge: { node: { id: string } }) => edge.node.id)).toEqual(
        made.map(idOf).reverse(),
      );
      expect(next.pageInfo.hasNextPage).toBe(false);
    }
  });
});
