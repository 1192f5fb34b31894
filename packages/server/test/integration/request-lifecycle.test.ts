import { requestInNewWork } from '../support/fixtures';
import { startTestServer, type TestServer, type TestUser } from '../support/server';

/** The request state machine over HTTP: transitions, repeats, conflicts and the event trail. */
let server: TestServer;
let ada: TestUser;

beforeAll(async () => {
  server = await startTestServer();
  ada = await server.createUser('ada');
});
afterAll(() => server.close());

async function act(path: string, action: string, json?: unknown) {
  const method = action === 'cancel' ? 'DELETE' : 'PUT';
  const res = await server.call(`${path}/${action}`, { method, apiKey: ada.apiKey, json });
  return { status: res.status, body: await res.json() };
}

type RequestPath = `/v1/tenants/${string}/works/${string}/requests/${string}`;

async function newRequestPath(): Promise<RequestPath> {
  const { tenant, work, request } = await requestInNewWork(ada);
  return `/v1/tenants/${tenant.id}/works/${work.id}/requests/${request.id}`;
}

async function events(path: RequestPath) {
  return (await (await server.call(`${path}/events`, { apiKey: ada.apiKey })).json()).events;
}

describe('request lifecycle', () => {
  it('goes pending → confirmed → validated, returning the Request itself and recording each step', async () => {
    const path = await newRequestPath();
    const confirmed = await act(path, 'confirm', { answer: 'All correct.' });
    expect(confirmed.status).toBe(200);
    expect(confirmed.body).toMatchObject({ status: 'confirmed', answer: 'All correct.', validation: null });
    expect(confirmed.body.confirmedAt).not.toBeNull();

    const validated = await act(path, 'validate');
    expect(validated.status).toBe(200);
    expect(validated.body).toMatchObject({ status: 'validated', validation: 'standard' });
    expect(validated.body.validatedAt).not.toBeNull();

    const trail = await events(path);
    expect(trail.totalCount).toBe(2);
    expect(trail.edges.map((edge: { node: unknown }) => edge.node)).toEqual([
      expect.objectContaining({ action: 'validate', fromStatus: 'confirmed', toStatus: 'validated', note: null }),
      expect.objectContaining({
        action: 'confirm',
        fromStatus: 'pending',
        toStatus: 'confirmed',
        note: 'All correct.',
      }),
    ]);
    expect(trail.edges[0]!.node.actor).toEqual({ firstName: 'ada', lastName: 'Tester', email: ada.email });
  });

  it('validates early from pending, and cancels with a reason', async () => {
    const early = await newRequestPath();
    expect((await act(early, 'early_validate')).body).toMatchObject({ status: 'validated', validation: 'early' });

    const cancelled = await newRequestPath();
    const res = await act(cancelled, 'cancel', { reason: 'Wrong recipient.' });
    expect(res.body).toMatchObject({ status: 'cancelled', cancelReason: 'Wrong recipient.' });
    expect(res.body.cancelledAt).not.toBeNull();
  });

  it('answers a repeat of the action that produced the state with 200 and the request unchanged, and no event', async () => {
    const path = await newRequestPath();
    const first = await act(path, 'cancel', { reason: 'Once.' });
    const again = await act(path, 'cancel', { reason: 'Twice.' });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect((await events(path)).totalCount).toBe(1);
  });

  it.each([
    ['validate', 'pending', [], ['confirm', 'early_validate', 'cancel']],
    ['confirm', 'validated', ['early_validate'], []],
    ['validate', 'validated', ['early_validate'], []],
    ['early_validate', 'cancelled', ['cancel'], []],
    ['confirm', 'cancelled', ['cancel'], []],
  ])(
    'refuses %s on a %s request with 409, currentStatus and allowedActions',
    async (action, status, setup, allowed) => {
      const path = await newRequestPath();
      for (const step of setup) await act(path, step);
      const before = await (await server.call(path, { apiKey: ada.apiKey })).json();
      const refused = await act(path, action);
      expect(refused.status).toBe(409);
      expect(refused.body).toMatchObject({
        code: 'invalid_transition',
        currentStatus: status,
        allowedActions: allowed,
      });
      const after = await (await server.call(path, { apiKey: ada.apiKey })).json();
      expect(after).toEqual(before);
    },
  );

  it('lets exactly one of two conflicting concurrent actions win', async () => {
    const path = await newRequestPath();
    const results = await Promise.all([act(path, 'early_validate'), act(path, 'cancel')]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
    expect((await events(path)).totalCount).toBe(1);
  });
});
