import { authenticate } from '../../src/domain/api-keys/api-keys';
import { updateMember } from '../../src/domain/members/members';
import { actOnRequest } from '../../src/domain/requests/requests';
import { allowedActions, type RequestAction, type RequestStatus } from '../../src/domain/requests/state-machine';
import { createRequest, createWork, ok } from '../support/fixtures';
import { addMember, type RoleFixture, tenantWithRoles } from '../support/roles';
import { startTestServer, type TestServer, type TestUser } from '../support/server';

/**
 * Conflicting actions on one request, sent at once. A transition is a conditional update, so of concurrent
 * conflicting actions exactly one wins and exactly one event is written. Runs on whichever database the suite
 * runs on: embedded PGlite by default, PostgreSQL when DATABASE_URL is set (CI runs both).
 */
let server: TestServer;
let roles: RoleFixture;
let workId: string;

beforeAll(async () => {
  server = await startTestServer();
  roles = await tenantWithRoles(server, 'Concurrency');
  workId = (await createWork(roles.owner, roles.tenant.id, 'Race track')).id;
});
afterAll(() => server.close());

const outcome: Record<Exclude<RequestAction, 'confirm'>, { status: RequestStatus; validation: string | null }> = {
  validate: { status: 'validated', validation: 'standard' },
  early_validate: { status: 'validated', validation: 'early' },
  cancel: { status: 'cancelled', validation: null },
};

const requestUrl = (id: string, tenantId = roles.tenant.id, work = workId) =>
  `/v1/tenants/${tenantId}/works/${work}/requests/${id}` as const;

async function newRequest(status: 'pending' | 'confirmed', work = workId): Promise<string> {
  const request = await createRequest(roles.owner, roles.tenant.id, work);
  if (status === 'confirmed') {
    const res = await act(roles.owner, request.id, 'confirm', work);
    expect(res.status).toBe(200);
  }
  return request.id;
}

function act(user: TestUser, requestId: string, action: RequestAction, work = workId) {
  return server.call(`${requestUrl(requestId, roles.tenant.id, work)}/${action}`, {
    method: action === 'cancel' ? 'DELETE' : 'PUT',
    apiKey: user.apiKey,
  });
}

async function eventsOf(requestId: string, work = workId) {
  const res = await server.call(`${requestUrl(requestId, roles.tenant.id, work)}/events?limit=100`, {
    apiKey: roles.owner.apiKey,
  });
  const { events } = await res.json();
  return events as {
    totalCount: number;
    edges: Array<{ node: { action: RequestAction; fromStatus: string; toStatus: string } }>;
  };
}

async function current(requestId: string, work = workId) {
  return (
    await (await server.call(requestUrl(requestId, roles.tenant.id, work), { apiKey: roles.owner.apiKey })).json()
  ).request;
}

/** Sends every action at once, each from one of the tenant's three users in turn; returns statuses and bodies. */
async function race(requestId: string, actions: readonly RequestAction[]) {
  const users = [roles.owner, roles.admin, roles.member];
  const responses = await Promise.all(actions.map((action, i) => act(users[i % users.length]!, requestId, action)));
  return Promise.all(
    responses.map(async (res, i) => ({ action: actions[i]!, status: res.status, body: await res.json() })),
  );
}

describe('20 parallel conflicting actions on one confirmed request', () => {
  // From `confirmed`, validate, early_validate and cancel are each allowed, and each leads to a final status:
  // whichever lands first wins, and the request can move no further.
  const actions: RequestAction[] = Array.from(
    { length: 20 },
    (_, i) => (['validate', 'early_validate', 'cancel'] as const)[i % 3]!,
  );

  it.each([1, 2, 3])('make exactly one transition and one event (run %i)', async () => {
    const requestId = await newRequest('confirmed');
    const results = await race(requestId, actions);

    const events = await eventsOf(requestId);
    // Events are written for transitions only: the confirm that set the request up, and the one winner.
    const raceEvents = events.edges.filter((edge) => edge.node.fromStatus === 'confirmed');
    expect(raceEvents).toHaveLength(1);
    expect(events.totalCount).toBe(2);
    const winner = raceEvents[0]!.node.action as keyof typeof outcome;
    expect(Object.keys(outcome)).toContain(winner);
    expect(raceEvents[0]!.node.toStatus).toBe(outcome[winner].status);

    const final = await current(requestId);
    expect(final).toMatchObject(outcome[winner]);

    for (const result of results) {
      if (result.action === winner) {
        // The winner's own action, sent again concurrently, is by PRODUCT.md an idempotent repeat: 200 with the
        // request unchanged. So every call of the winning action gets 200 and the same final request; exactly one
        // of them made the transition (the single event says so).
        expect({ action: result.action, status: result.status }).toEqual({ action: winner, status: 200 });
        expect(result.body).toEqual(final);
      } else {
        expect({ action: result.action, status: result.status }).toEqual({ action: result.action, status: 409 });
        expect(result.body).toMatchObject({
          code: 'invalid_transition',
          currentStatus: final.status,
          allowedActions: allowedActions(final.status),
        });
        expect(result.body.allowedActions).toEqual([]);
      }
    }
    expect(results.filter((result) => result.status === 200)).toHaveLength(actions.filter((a) => a === winner).length);
  });
});

describe('the same race straight into the domain layer, all 20 started in one tick', () => {
  // Over HTTP on the embedded PGlite, a request never waits for real I/O, so the server tends to finish one
  // call before it reads the next from its socket: the HTTP races above are real races on PostgreSQL only.
  // Started together in one tick, these 20 calls all read the request before any of them writes, on either
  // database, so the conditional update is what keeps it to one transition.
  it('makes exactly one transition and one event', async () => {
    const requestId = await newRequest('confirmed');
    const db = server.database;
    const users = [roles.owner, roles.admin, roles.member];
    const actors = await Promise.all(users.map((user) => authenticate(db, user.apiKey)));
    const ref = { tenantId: roles.tenant.id, workId, requestId };
    const actions = Array.from({ length: 20 }, (_, i) => (['validate', 'early_validate', 'cancel'] as const)[i % 3]!);
    const settled = await Promise.allSettled(
      actions.map((action, i) => actOnRequest(db, actors[i % 3]!, { ref, action })),
    );

    const events = await db.prisma.requestEvent.findMany({ where: { requestId, fromStatus: 'confirmed' } });
    expect(events).toHaveLength(1);
    const winner = events[0]!.action as keyof typeof outcome;
    const final = await current(requestId);
    expect(final).toMatchObject(outcome[winner]);
    settled.forEach((result, i) => {
      if (actions[i] === winner) {
        expect(result).toEqual({ status: 'fulfilled', value: final });
      } else {
        expect(result).toMatchObject({ status: 'rejected', reason: { code: 'invalid_transition' } });
      }
    });
  });

  it('keeps one owner when two owners demote each other', async () => {
    const db = server.database;
    const tenant = ok(await roles.owner.client.POST('/tenants', { body: { name: 'Two owners, no HTTP' } })).tenant;
    const second = await server.createUser('second-owner');
    await addMember(roles.owner, tenant.id, second, 'owner');
    const [first, other] = await Promise.all([roles.owner, second].map((user) => authenticate(db, user.apiKey)));
    const settled = await Promise.allSettled([
      updateMember(db, first!, { tenantId: tenant.id, userId: second.id, role: 'admin' }),
      updateMember(db, other!, { tenantId: tenant.id, userId: roles.owner.id, role: 'admin' }),
    ]);
    expect(settled.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
    const refused = settled.find((result) => result.status === 'rejected') as PromiseRejectedResult;
    expect(['last_owner', 'forbidden']).toContain(refused.reason.code);
    expect(await db.prisma.membership.count({ where: { tenantId: tenant.id, role: 'owner' } })).toBe(1);
  });
});

describe('three distinct actions at once, once each, on many requests at the same time', () => {
  // With each action sent exactly once there are no repeats of the winner, so the wording holds
  // literally: exactly one call succeeds and the two others get 409. Ten requests race at once, 30 calls in all,
  // so that different actions win on different requests and the database sees contention on several rows.
  it('lets exactly one of the three win on every request', async () => {
    const requestIds = await Promise.all(Array.from({ length: 10 }, () => newRequest('confirmed')));
    const rounds = await Promise.all(
      requestIds.map((requestId, i) => {
        const order = (['validate', 'early_validate', 'cancel'] as const).map((_, k, all) => all[(k + i) % 3]!);
        return race(requestId, order);
      }),
    );

    for (const [i, results] of rounds.entries()) {
      const requestId = requestIds[i]!;
      const wins = results.filter((result) => result.status === 200);
      expect(wins).toHaveLength(1);
      expect(results.filter((result) => result.status === 409)).toHaveLength(2);
      const winner = wins[0]!.action as keyof typeof outcome;
      const final = await current(requestId);
      expect(final).toMatchObject(outcome[winner]);
      expect(wins[0]!.body).toEqual(final);
      for (const loser of results.filter((result) => result.status === 409)) {
        expect(loser.body).toMatchObject({
          code: 'invalid_transition',
          currentStatus: final.status,
          allowedActions: [],
        });
      }
      const raceEvents = (await eventsOf(requestId)).edges.filter((edge) => edge.node.fromStatus === 'confirmed');
      expect(raceEvents.map((edge) => edge.node.action)).toEqual([winner]);
    }
  });
});

describe('20 parallel actions on a pending request, where two transitions may follow each other', () => {
  // From `pending`, confirm leads to `confirmed`, from which early_validate and cancel are still allowed: one
  // or two transitions can happen. Whatever the interleaving, the events form one chain with no transition twice.
  it('records a valid chain of events and answers every loser with the status it lost to', async () => {
    const requestId = await newRequest('pending');
    const actions = Array.from({ length: 20 }, (_, i) => (['confirm', 'early_validate', 'cancel'] as const)[i % 3]!);
    const results = await race(requestId, actions);

    const chain = (await eventsOf(requestId)).edges.map((edge) => edge.node).reverse();
    expect(chain.length).toBeGreaterThanOrEqual(1);
    expect(chain.length).toBeLessThanOrEqual(2);
    expect(chain[0]!.fromStatus).toBe('pending');
    if (chain.length === 2) {
      expect(chain[0]!.action).toBe('confirm');
      expect(chain[1]!.fromStatus).toBe('confirmed');
    }
    const final = await current(requestId);
    expect(chain.at(-1)!.toStatus).toBe(final.status);

    for (const result of results) {
      if (result.status === 200) {
        expect(chain.map((event) => event.action)).toContain(result.action);
      } else {
        expect(result.status).toBe(409);
        expect(result.body.code).toBe('invalid_transition');
        expect(result.body.allowedActions).toEqual(allowedActions(result.body.currentStatus!));
        expect(result.body.allowedActions).not.toContain(result.action);
      }
    }
  });
});

describe('discarding a work while its request is being acted on', () => {
  it('lets no transition through after the discard, and answers 409 work_discarded from then on', async () => {
    const work = await createWork(roles.owner, roles.tenant.id, 'Discarded mid-race');
    const requestId = await newRequest('confirmed', work.id);
    const actions = Array.from({ length: 10 }, (_, i) => (['validate', 'early_validate', 'cancel'] as const)[i % 3]!);
    const [discard, ...results] = await Promise.all([
      server.call(`/v1/tenants/${roles.tenant.id}/works/${work.id}`, { method: 'DELETE', apiKey: roles.admin.apiKey }),
      ...actions.map((action) => act(roles.member, requestId, action, work.id)),
    ]);
    expect(discard.status).toBe(200);
    const codes = await Promise.all(results.map(async (res) => (res.status === 200 ? 'ok' : (await res.json()).code)));
    for (const code of codes) expect(['ok', 'invalid_transition', 'work_discarded']).toContain(code);

    const raceEvents = (await eventsOf(requestId, work.id)).edges.filter(
      (edge) => edge.node.fromStatus === 'confirmed',
    );
    expect(raceEvents.length).toBeLessThanOrEqual(1);
    const final = await current(requestId, work.id);
    expect(final.status).toBe(raceEvents.length === 1 ? raceEvents[0]!.node.toStatus : 'confirmed');

    for (const action of ['validate', 'early_validate', 'cancel', 'confirm'] as const) {
      const res = await act(roles.member, requestId, action, work.id);
      expect(res.status).toBe(409);
      expect((await res.json()).code).toBe('work_discarded');
    }
  });
});

describe('two owners demoting each other at once', () => {
  it('keeps one owner: exactly one demotion wins, the other gets 409 last_owner', async () => {
    const tenant = ok(await roles.owner.client.POST('/tenants', { body: { name: 'Two owners' } })).tenant;
    const second = await server.createUser('second-owner');
    await addMember(roles.owner, tenant.id, second, 'owner');

    for (let round = 0; round < 3; round++) {
      const [a, b] = await Promise.all([
        server.call(`/v1/tenants/${tenant.id}/members/${second.id}`, {
          method: 'PATCH',
          apiKey: roles.owner.apiKey,
          json: { role: 'admin' },
        }),
        server.call(`/v1/tenants/${tenant.id}/members/${roles.owner.id}`, {
          method: 'PATCH',
          apiKey: second.apiKey,
          json: { role: 'admin' },
        }),
      ]);
      const statuses = [a.status, b.status].sort();
      // The loser either finds itself no longer an owner (403: only owners touch the owner role) or finds the
      // other already demoted and itself the last owner (409 last_owner). Never both demoted.
      expect(statuses[0]).toBe(200);
      expect([403, 409]).toContain(statuses[1]);
      const members = ok(
        await roles.owner.client.GET('/tenants/{tenant_id}/members', { params: { path: { tenant_id: tenant.id } } }),
      ).members.edges.map((edge) => edge.node);
      expect(members.filter((member) => member.role === 'owner')).toHaveLength(1);

      // Restore both owners for the next round.
      const remaining = members.find((member) => member.role === 'owner')!.user.id;
      const [owner, other] = remaining === roles.owner.id ? [roles.owner, second] : [second, roles.owner];
      ok(
        await owner.client.PATCH('/tenants/{tenant_id}/members/{user_id}', {
          params: { path: { tenant_id: tenant.id, user_id: other.id } },
          body: { role: 'owner' },
        }),
      );
    }
  });
});
