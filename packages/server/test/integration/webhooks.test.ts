import { verifyWebhook, type WebhookEvent, WebhookVerificationError } from '@works-api/client';
import { newId } from '@works-api/prisma';
import { createRequest, createTenant, createWork, ok, subscribe } from '../support/fixtures';
import { eventually } from '../support/load';
import { type Receiver, startReceiver } from '../support/receiver';
import { addNewMember } from '../support/roles';
import { startTestServer, type TestServer, type TestUser } from '../support/server';

/** Real receivers on 127.0.0.1, the app's dispatcher delivering to them (woken by commits, as in production). */
let server: TestServer;
let owner: TestUser;
let receiver: Receiver;
// On a shared PostgreSQL each dispatcher of this file claims only its own tenants' deliveries (see onlyTenants).
const autoTenants: string[] = [];
const manualTenants: string[] = [];
const tenantFor = async (user: TestUser, name: string, into: string[]) => {
  const tenant = await createTenant(user, name);
  into.push(tenant.id);
  return tenant;
};

beforeAll(async () => {
  server = await startTestServer({ webhooks: { onlyTenants: () => autoTenants } });
  owner = await server.createUser('hooks');
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver.close();
  await server.close();
});

const eventsOf = (received: Receiver['received'], secret: string, options?: Parameters<typeof verifyWebhook>[3]) =>
  received.map(({ body, headers }) => verifyWebhook(body, headers as Record<string, string>, secret, options));

describe('webhook events', () => {
  it('every action produces exactly its documented event, signed, with the resource as the API returns it', async () => {
    const tenant = await tenantFor(owner, 'Hooked Inc', autoTenants);
    const endpoint = await subscribe(owner, tenant.id, receiver.url);
    expect(endpoint.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    const work = await createWork(owner, tenant.id);
    const at = (id: string) => ({ params: { path: { tenant_id: tenant.id, work_id: work.id, id } } });

    const first = await createRequest(owner, tenant.id, work.id);
    const confirmed = ok(
      await owner.client.PUT('/tenants/{tenant_id}/works/{work_id}/requests/{id}/confirm', {
        ...at(first.id),
        body: { answer: 'Yes' },
      }),
    );
    // A repeat (200, unchanged) and a refused transition (409) change nothing, so they send nothing.
    ok(
      await owner.client.PUT('/tenants/{tenant_id}/works/{work_id}/requests/{id}/confirm', {
        ...at(first.id),
        body: { answer: 'Yes' },
      }),
    );
    const validated = ok(
      await owner.client.PUT('/tenants/{tenant_id}/works/{work_id}/requests/{id}/validate', at(first.id)),
    );
    const second = await createRequest(owner, tenant.id, work.id);
    const refused = await owner.client.PUT(
      '/tenants/{tenant_id}/works/{work_id}/requests/{id}/validate',
      at(second.id),
    );
    expect(refused.response.status).toBe(409);
    const early = ok(
      await owner.client.PUT('/tenants/{tenant_id}/works/{work_id}/requests/{id}/early_validate', at(second.id)),
    );
    const third = await createRequest(owner, tenant.id, work.id);
    const cancelled = ok(
      await owner.client.DELETE('/tenants/{tenant_id}/works/{work_id}/requests/{id}/cancel', {
        ...at(third.id),
        body: { reason: 'No longer needed' },
      }),
    );
    const workPath = { params: { path: { tenant_id: tenant.id, work_id: work.id } } };
    const discarded = ok(await owner.client.DELETE('/tenants/{tenant_id}/works/{work_id}', workPath)).work;
    ok(await owner.client.DELETE('/tenants/{tenant_id}/works/{work_id}', workPath)); // already discarded: no event
    const restored = ok(await owner.client.PUT('/tenants/{tenant_id}/works/{work_id}/undiscard', workPath)).work;
    const member = await addNewMember(server, owner, tenant.id, 'member', 'hooked');
    // Adding them again is a 409 whose transaction rolls back: no event.
    const again = await owner.client.POST('/tenants/{tenant_id}/members', {
      params: { path: { tenant_id: tenant.id } },
      body: { email: member.user.email, role: 'admin' },
    });
    expect(again.response.status).toBe(409);
    const promoted = ok(
      await owner.client.PATCH('/tenants/{tenant_id}/members/{user_id}', {
        params: { path: { tenant_id: tenant.id, user_id: member.user.id } },
        body: { role: 'admin' },
      }),
    ).member;
    const removal = await owner.client.DELETE('/tenants/{tenant_id}/members/{user_id}', {
      params: { path: { tenant_id: tenant.id, user_id: member.user.id } },
    });
    expect(removal.response.status).toBe(204);

    const expected: Array<[WebhookEvent['type'], unknown]> = [
      ['request.created', { request: first }],
      ['request.confirmed', { request: confirmed }],
      ['request.validated', { request: validated }],
      ['request.created', { request: second }],
      ['request.validated', { request: early }],
      ['request.created', { request: third }],
      ['request.cancelled', { request: cancelled }],
      ['work.discarded', { work: discarded }],
      ['work.undiscarded', { work: restored }],
      ['member.added', { member }],
      ['member.role_changed', { member: promoted, previousRole: 'member' }],
      ['member.removed', { member: promoted }],
    ];
    const received = await receiver.waitFor(expected.length);
    const events = eventsOf(received, endpoint.secret);
    const byData = (events: Array<{ type: string; data: unknown }>) =>
      events.map(({ type, data }) => JSON.stringify([type, data])).sort();
    expect(byData(events)).toEqual(byData(expected.map(([type, data]) => ({ type, data }))));
    for (const event of events) {
      expect(event.tenantId).toBe(tenant.id);
      expect(Date.parse(event.createdAt)).not.toBeNaN();
    }
    expect(new Set(events.map((event) => event.id)).size).toBe(events.length);
    // Each request's events arrive in the order they happened.
    const ofFirst = events.filter(
      (event) =>
        event.type.startsWith('request.') && (event.data as { request: { id: string } }).request.id === first.id,
    );
    expect(ofFirst.map((event) => event.type)).toEqual(['request.created', 'request.confirmed', 'request.validated']);
    // The webhook-id header is the event id; the deliveries list shows them all delivered, first attempt.
    for (const { headers, body } of received) expect(headers['webhook-id']).toBe(JSON.parse(body).id);
    // The dispatcher records an attempt just after the receiver answered it: wait for the records, not a time.
    await eventually(
      async () => {
        const deliveries = ok(
          await owner.client.GET('/tenants/{tenant_id}/webhook-endpoints/{endpoint_id}/deliveries', {
            params: { path: { tenant_id: tenant.id, endpoint_id: endpoint.id }, query: { limit: 100 } },
          }),
        ).deliveries;
        expect(deliveries.totalCount).toBe(expected.length);
        for (const { node } of deliveries.edges) {
          expect(node).toMatchObject({
            status: 'delivered',
            attempts: 1,
            lastStatusCode: 200,
            lastError: null,
            nextAttemptAt: null,
          });
        }
      },
      { pauseMs: 0 },
    );
    expect(receiver.received).toHaveLength(expected.length);
  });

  it('sends an endpoint only the types it subscribed to, and a test event on demand', async () => {
    const tenant = await tenantFor(owner, 'Filtered Inc', autoTenants);
    const filtered = await startReceiver();
    try {
      const endpoint = await subscribe(owner, tenant.id, filtered.url, ['request.confirmed']);
      const work = await createWork(owner, tenant.id);
      const request = await createRequest(owner, tenant.id, work.id);
      const path = { tenant_id: tenant.id, work_id: work.id, id: request.id };
      ok(await owner.client.PUT('/tenants/{tenant_id}/works/{work_id}/requests/{id}/confirm', { params: { path } }));
      ok(await owner.client.PUT('/tenants/{tenant_id}/works/{work_id}/requests/{id}/validate', { params: { path } }));
      const queued = ok(
        await owner.client.POST('/tenants/{tenant_id}/webhook-endpoints/{endpoint_id}/test', {
          params: { path: { tenant_id: tenant.id, endpoint_id: endpoint.id } },
        }),
      ).delivery;
      expect(queued).toMatchObject({ status: 'pending', attempts: 0, event: { type: 'webhook_endpoint.test' } });
      const events = eventsOf(await filtered.waitFor(2), endpoint.secret);
      expect(events.map((event) => event.type).sort()).toEqual(['request.confirmed', 'webhook_endpoint.test']);
      const test = events.find((event) => event.type === 'webhook_endpoint.test')!;
      expect(test.data).toEqual({ webhookEndpoint: { id: endpoint.id, url: filtered.url } });
    } finally {
      await filtered.close();
    }
  });
});

describe('webhook endpoint URLs (SSRF)', () => {
  let strict: TestServer;
  let user: TestUser;
  let tenantId: string;
  beforeAll(async () => {
    // Names resolve from this table, as a name server would answer them.
    const names: Record<string, string[]> = {
      'intranet.example.com': ['10.20.30.40'],
      'mixed.example.com': ['93.184.216.34', '::ffff:0:a9fe:a9fe'],
      'public.example.com': ['93.184.216.34'],
    };
    const lookup = async (host: string) => {
      // As c-ares answers a name that does not exist, or a name server that fails.
      if (host === 'nowhere.example.com' || host === 'failing.example.com')
        throw Object.assign(new Error(`queryA ${host === 'nowhere.example.com' ? 'ENOTFOUND' : 'ESERVFAIL'} ${host}`), {
          code: host === 'nowhere.example.com' ? 'ENOTFOUND' : 'ESERVFAIL',
        });
      return (names[host] ?? []).map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    };
    strict = await startTestServer({
      webhooks: { allowPrivateUrls: false, manual: true, onlyTenants: () => [tenantId], lookup },
    });
    user = await strict.createUser('strict');
    tenantId = (await createTenant(user, 'Strict Inc')).id;
  });
  afterAll(() => strict.close());

  it.each([
    'http://hooks.example.com/x',
    'https://127.0.0.1/x',
    'https://10.0.0.7/x',
    'https://169.254.169.254/latest/meta-data',
    'https://[::1]/x',
    'https://[::ffff:127.0.0.1]/x',
    'https://[fd00::1]/x',
    'https://localhost:8443/x',
    'https://user:pw@hooks.example.com/x',
    'https://8.8.8.8:8443/x', // a public address, but not port 443: lastError would report which ports are open
    'https://[64:ff9b:1::7f00:1]/x', // NAT64's local-use prefix carrying 127.0.0.1
    'https://[64:ff9b:1::808:808]/x', // … refused whole, whatever it carries
    'https://[::ffff:0:a9fe:a9fe]/x', // SIIT's IPv4-translated form, carrying 169.254.169.254
    'https://[3fff::1]/x', // documentation
    'https://[5f00::1]/x', // segment routing
  ])('refuses %s without WEBHOOK_ALLOW_PRIVATE_URLS', async (url) => {
    const res = await strict.call(`/v1/tenants/${tenantId}/webhook-endpoints`, {
      method: 'POST',
      apiKey: user.apiKey,
      json: { url },
    });
    expect(res.status).toBe(400);
    expect((await res.json()).code).toBe('webhook_url_not_allowed');
  });

  it('accepts a public address on port 443, written or not', async () => {
    for (const url of [
      'https://8.8.8.8/x',
      'https://8.8.8.8:443/x',
      'https://[64:ff9b::808:808]/x',
      'https://public.example.com/x',
    ]) {
      const res = await strict.call(`/v1/tenants/${tenantId}/webhook-endpoints`, {
        method: 'POST',
        apiKey: user.apiKey,
        json: { url, enabled: false },
      });
      expect(res.status).toBe(201);
    }
  });

  /** Names that resolve to a private address, to a mix, to nothing, to no such name, or whose lookup fails. */
  const unusableNames = [
    'intranet.example.com',
    'mixed.example.com',
    'empty.example.com',
    'nowhere.example.com',
    'failing.example.com',
  ];

  it('answers every name that does not resolve to public addresses only the same way: no map of internal names', async () => {
    const answers = [];
    for (const host of unusableNames) {
      const res = await strict.call(`/v1/tenants/${tenantId}/webhook-endpoints`, {
        method: 'POST',
        apiKey: user.apiKey,
        json: { url: `https://${host}/hooks` },
      });
      const text = await res.text();
      for (const leak of ['10.20.30.40', '10.20', 'a9fe', '169.254', host]) expect(text).not.toContain(leak);
      answers.push({ status: res.status, body: JSON.parse(text) as Record<string, unknown> });
    }
    // Whether the name exists, resolves to a private address or fails to resolve: one status, code and message.
    expect(answers[0]).toEqual({
      status: 400,
      body: expect.objectContaining({
        code: 'webhook_url_not_allowed',
        detail: 'The webhook URL must have a host name that resolves to public addresses only.',
        errors: [{ path: '/body/url', message: 'url must have a host name that resolves to public addresses only' }],
      }),
    });
    expect(new Set(answers.map(({ body: { instance: _instance, ...rest } }) => JSON.stringify(rest))).size).toBe(1);
  });

  it('records the same lastError at delivery time for every such name', async () => {
    const endpoints = [];
    for (const host of unusableNames) {
      // Written straight to the database, as if the name had resolved to a public address when it was registered.
      const endpoint = await strict.database.prisma.webhookEndpoint.create({
        data: {
          id: newId(),
          tenantId,
          url: `https://${host}/hooks`,
          secret: 'whsec_' + Buffer.alloc(32, 1).toString('base64'),
        },
      });
      ok(
        await user.client.POST('/tenants/{tenant_id}/webhook-endpoints/{endpoint_id}/test', {
          params: { path: { tenant_id: tenantId, endpoint_id: endpoint.id } },
        }),
      );
      endpoints.push(endpoint);
    }
    while ((await strict.dispatcher!.runOnce()) > 0);
    const errors = [];
    for (const endpoint of endpoints) {
      const [delivery] = ok(
        await user.client.GET('/tenants/{tenant_id}/webhook-endpoints/{endpoint_id}/deliveries', {
          params: { path: { tenant_id: tenantId, endpoint_id: endpoint.id } },
        }),
      ).deliveries.edges;
      expect(delivery!.node).toMatchObject({ status: 'pending', attempts: 1, lastStatusCode: null });
      errors.push(delivery!.node.lastError);
    }
    expect(errors).toEqual(unusableNames.map(() => 'the host name does not resolve to public addresses only'));
    for (const endpoint of endpoints)
      await strict.database.prisma.webhookEndpoint.delete({ where: { id: endpoint.id } });
  });

  it('refuses at delivery time too, without connecting, when an endpoint points at a private address', async () => {
    const trap = await startReceiver();
    try {
      // Written straight to the database, as if it had resolved to a public address when it was registered.
      const endpoint = await strict.database.prisma.webhookEndpoint.create({
        data: { id: newId(), tenantId, url: trap.url, secret: 'whsec_' + Buffer.alloc(32, 1).toString('base64') },
      });
      ok(
        await user.client.POST('/tenants/{tenant_id}/webhook-endpoints/{endpoint_id}/test', {
          params: { path: { tenant_id: tenantId, endpoint_id: endpoint.id } },
        }),
      );
      expect(await strict.dispatcher!.runOnce()).toBe(1);
      expect(trap.received).toHaveLength(0);
      const [delivery] = ok(
        await user.client.GET('/tenants/{tenant_id}/webhook-endpoints/{endpoint_id}/deliveries', {
          params: { path: { tenant_id: tenantId, endpoint_id: endpoint.id } },
        }),
      ).deliveries.edges;
      expect(delivery!.node).toMatchObject({ status: 'pending', attempts: 1, lastStatusCode: null });
      expect(delivery!.node.lastError).toBe('127.0.0.1 is not a public address');
    } finally {
      await trap.close();
    }
  });
});

describe('retries, ordering, rotation and failure (injected clock, no waiting)', () => {
  let manual: TestServer;
  let now: Date;
  let user: TestUser;
  beforeAll(async () => {
    // Ahead of the real clock, so what the API schedules "now" (a test event, a manual retry) is already due.
    now = new Date(Date.now() + 3_600_000);
    manual = await startTestServer({
      webhooks: { manual: true, onlyTenants: () => manualTenants, clock: () => now, random: () => 0.5, timeoutMs: 500 },
    });
    user = await manual.createUser('clock');
  });
  afterAll(() => manual.close());
  const advance = (ms: number) => (now = new Date(now.getTime() + ms));

  async function deliveriesOf(tenantId: string, endpointId: string) {
    return ok(
      await user.client.GET('/tenants/{tenant_id}/webhook-endpoints/{endpoint_id}/deliveries', {
        params: { path: { tenant_id: tenantId, endpoint_id: endpointId } },
      }),
    ).deliveries.edges.map((edge) => edge.node);
  }

  it('a receiver that fails 3 times gets the event on the 4th attempt, and a later event of the request waits for it', async () => {
    const flaky = await startReceiver((_received, index, res) => {
      res.statusCode = index < 3 ? 503 : 200;
      res.end(index < 3 ? 'busy' : 'ok');
    });
    try {
      const tenant = await tenantFor(user, 'Flaky Inc', manualTenants);
      const endpoint = await subscribe(user, tenant.id, flaky.url);
      const work = await createWork(user, tenant.id);
      const request = await createRequest(user, tenant.id, work.id);
      expect(await manual.dispatcher!.runOnce()).toBe(1);
      // The request moves on while its first event is being retried.
      ok(
        await user.client.PUT('/tenants/{tenant_id}/works/{work_id}/requests/{id}/confirm', {
          params: { path: { tenant_id: tenant.id, work_id: work.id, id: request.id } },
        }),
      );
      expect(await manual.dispatcher!.runOnce()).toBe(0);
      for (const [attempt, wait] of [
        [1, 5_000],
        [2, 60_000],
        [3, 600_000],
      ] as const) {
        const [confirmedDelivery, createdDelivery] = await deliveriesOf(tenant.id, endpoint.id);
        expect(createdDelivery).toMatchObject({
          status: 'pending',
          attempts: attempt,
          lastStatusCode: 503,
          lastError: 'HTTP 503',
          lastResponseExcerpt: 'busy',
        });
        expect(Date.parse(createdDelivery!.nextAttemptAt!)).toBe(now.getTime() + wait);
        expect(confirmedDelivery).toMatchObject({ status: 'pending', attempts: 0 });
        // Not due yet: nothing is sent, and the confirmed event waits behind the created one.
        advance(wait - 1);
        expect(await manual.dispatcher!.runOnce()).toBe(0);
        advance(1);
        expect(await manual.dispatcher!.runOnce()).toBe(1);
      }
      expect(flaky.received).toHaveLength(4);
      expect(new Set(flaky.received.map((r) => r.headers['webhook-id'])).size).toBe(1);
      const [, created] = await deliveriesOf(tenant.id, endpoint.id);
      expect(created).toMatchObject({ status: 'delivered', attempts: 4, lastStatusCode: 200, nextAttemptAt: null });
      // Now the later event goes out.
      expect(await manual.dispatcher!.runOnce()).toBe(1);
      // Signed at the injected clock's times, which span 11 minutes.
      expect(
        eventsOf(flaky.received, endpoint.secret, { now, toleranceSeconds: 3600 }).map((event) => event.type),
      ).toEqual(['request.created', 'request.created', 'request.created', 'request.created', 'request.confirmed']);
      const endpointNow = ok(
        await user.client.GET('/tenants/{tenant_id}/webhook-endpoints/{endpoint_id}', {
          params: { path: { tenant_id: tenant.id, endpoint_id: endpoint.id } },
        }),
      ).webhookEndpoint;
      expect(endpointNow).toMatchObject({ enabled: true, failingSince: null });
    } finally {
      await flaky.close();
    }
  });

  it('signs with both secrets for 24 hours after a rotation, then with the new one only', async () => {
    const rotating = await startReceiver();
    try {
      const tenant = await tenantFor(user, 'Rotating Inc', manualTenants);
      const original = await subscribe(user, tenant.id, rotating.url);
      const path = { params: { path: { tenant_id: tenant.id, endpoint_id: original.id } } };
      const rotated = ok(
        await user.client.POST('/tenants/{tenant_id}/webhook-endpoints/{endpoint_id}/rotate-secret', path),
      ).webhookEndpoint;
      expect(rotated.secret).not.toBe(original.secret);
      expect(Date.parse(rotated.previousSecretExpiresAt!)).toBeGreaterThan(Date.now() + 23 * 3_600_000);
      ok(await user.client.POST('/tenants/{tenant_id}/webhook-endpoints/{endpoint_id}/test', path));
      expect(await manual.dispatcher!.runOnce()).toBe(1);
      const [during] = rotating.received;
      expect(String(during!.headers['webhook-signature']).split(' ')).toHaveLength(2);
      const verify = (secret: string, at: Date) => verifyWebhook(during!.body, during!.headers, secret, { now: at });
      expect(verify(original.secret, now).type).toBe('webhook_endpoint.test');
      expect(verify(rotated.secret, now).type).toBe('webhook_endpoint.test');

      advance(25 * 3_600_000);
      ok(await user.client.POST('/tenants/{tenant_id}/webhook-endpoints/{endpoint_id}/test', path));
      expect(await manual.dispatcher!.runOnce()).toBe(1);
      const after = rotating.received[1]!;
      expect(String(after.headers['webhook-signature']).split(' ')).toHaveLength(1);
      expect(verifyWebhook(after.body, after.headers as Record<string, string>, rotated.secret, { now }).type).toBe(
        'webhook_endpoint.test',
      );
      expect(() =>
        verifyWebhook(after.body, after.headers as Record<string, string>, original.secret, { now }),
      ).toThrow(WebhookVerificationError);
    } finally {
      await rotating.close();
    }
  });

  it('gives up after about 3 days, disables an endpoint failing for 5 days, and says so; redirects are not followed', async () => {
    const broken = await startReceiver((_received, _index, res) => {
      res.statusCode = 302;
      res.setHeader('Location', 'http://127.0.0.1:9/elsewhere');
      res.end('x'.repeat(100 * 1024));
    });
    try {
      const tenant = await tenantFor(user, 'Broken Inc', manualTenants);
      const endpoint = await subscribe(user, tenant.id, broken.url);
      const work = await createWork(user, tenant.id);
      await createRequest(user, tenant.id, work.id);
      const started = now.getTime();
      for (let round = 0; round < 20; round++) {
        await manual.dispatcher!.runOnce();
        const [delivery] = await deliveriesOf(tenant.id, endpoint.id);
        if (delivery!.status !== 'pending') break;
        now = new Date(Date.parse(delivery!.nextAttemptAt!));
      }
      const [delivery] = await deliveriesOf(tenant.id, endpoint.id);
      expect(delivery).toMatchObject({ status: 'failed', attempts: 9, lastStatusCode: 302, nextAttemptAt: null });
      expect(delivery!.lastError).toBe('HTTP 302: redirects are not followed');
      expect(delivery!.lastResponseExcerpt).toHaveLength(500);
      expect(broken.received).toHaveLength(9);
      expect((now.getTime() - started) / 86_400_000).toBeGreaterThan(2.5);

      // Still failing 5 days after the first failure: the next failed attempt disables the endpoint.
      now = new Date(started + 5 * 86_400_000 + 1000);
      const path = { params: { path: { tenant_id: tenant.id, endpoint_id: endpoint.id } } };
      ok(await user.client.POST('/tenants/{tenant_id}/webhook-endpoints/{endpoint_id}/test', path));
      expect(await manual.dispatcher!.runOnce()).toBe(1);
      const disabled = ok(
        await user.client.GET('/tenants/{tenant_id}/webhook-endpoints/{endpoint_id}', path),
      ).webhookEndpoint;
      expect(disabled).toMatchObject({ enabled: false, disabledReason: 'failing' });
      expect(Date.parse(disabled.failingSince!)).toBeLessThanOrEqual(started + 1000);
      // Disabled: new events are not sent. Enabling it again clears the failure state.
      await createRequest(user, tenant.id, work.id);
      expect(await manual.dispatcher!.runOnce()).toBe(0);
      const enabled = ok(
        await user.client.PATCH('/tenants/{tenant_id}/webhook-endpoints/{endpoint_id}', {
          ...path,
          body: { enabled: true },
        }),
      ).webhookEndpoint;
      expect(enabled).toMatchObject({ enabled: true, disabledReason: null, failingSince: null });
      // A failed delivery can be retried by hand.
      const retried = ok(
        await user.client.POST('/tenants/{tenant_id}/webhook-endpoints/{endpoint_id}/deliveries/{delivery_id}/retry', {
          params: { path: { tenant_id: tenant.id, endpoint_id: endpoint.id, delivery_id: delivery!.id } },
        }),
      ).delivery;
      expect(retried).toMatchObject({ status: 'pending', attempts: 9 });
      expect(await manual.dispatcher!.runOnce()).toBe(1);
      expect(broken.received).toHaveLength(11);
    } finally {
      await broken.close();
    }
  });

  it('keeps delivery history for 30 days', async () => {
    const kept = await startReceiver();
    try {
      const tenant = await tenantFor(user, 'History Inc', manualTenants);
      const endpoint = await subscribe(user, tenant.id, kept.url);
      const path = { params: { path: { tenant_id: tenant.id, endpoint_id: endpoint.id } } };
      ok(await user.client.POST('/tenants/{tenant_id}/webhook-endpoints/{endpoint_id}/test', path));
      await manual.dispatcher!.runOnce();
      expect(
        ok(await user.client.GET('/tenants/{tenant_id}/webhook-endpoints/{endpoint_id}/deliveries', path)).deliveries
          .totalCount,
      ).toBe(1);
      now = new Date(Date.now() + 29 * 86_400_000);
      await manual.dispatcher!.cleanUp();
      expect(
        ok(await user.client.GET('/tenants/{tenant_id}/webhook-endpoints/{endpoint_id}/deliveries', path)).deliveries
          .totalCount,
      ).toBe(1);
      now = new Date(Date.now() + 31 * 86_400_000);
      await manual.dispatcher!.cleanUp();
      expect(
        ok(await user.client.GET('/tenants/{tenant_id}/webhook-endpoints/{endpoint_id}/deliveries', path)).deliveries
          .totalCount,
      ).toBe(0);
    } finally {
      await kept.close();
    }
  });

  it('cuts off a receiver that does not answer in time', async () => {
    const silent = await startReceiver(() => undefined);
    try {
      const tenant = await tenantFor(user, 'Silent Inc', manualTenants);
      const endpoint = await subscribe(user, tenant.id, silent.url);
      ok(
        await user.client.POST('/tenants/{tenant_id}/webhook-endpoints/{endpoint_id}/test', {
          params: { path: { tenant_id: tenant.id, endpoint_id: endpoint.id } },
        }),
      );
      // (Earlier tests' retries may fall due at this clock too: only this endpoint's delivery is checked.)
      expect(await manual.dispatcher!.runOnce()).toBeGreaterThanOrEqual(1);
      const [delivery] = await deliveriesOf(tenant.id, endpoint.id);
      expect(delivery).toMatchObject({
        status: 'pending',
        attempts: 1,
        lastStatusCode: null,
        lastError: 'no response within 0.5 s',
      });
    } finally {
      await silent.close();
    }
  });
});
