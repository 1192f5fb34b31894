import { createClient, unwrap, verifyWebhook, type WorksApiClient } from '@works-api/client';
import { databaseEnv, killAll, removeDataDirs, type ServerProcess, spawnServer } from '../support/process';
import { type Receiver, startReceiver } from '../support/receiver';
import { ADMIN_TOKEN, createUserAt } from '../support/server';

/**
 * Webhooks across real server processes (`node dist/main.js`). Their dispatchers poll rarely here: they act at
 * start-up and when their own commits or attempts wake them, so on a shared PostgreSQL they stay out of the way of
 * other test files' dispatchers.
 */
const webhookEnv = { ADMIN_TOKEN, WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_POLL_INTERVAL_MS: '600000' };

async function userOn(baseUrl: string): Promise<{ api: WorksApiClient; apiKey: string }> {
  const { client, apiKey } = await createUserAt(baseUrl, 'proc');
  return { api: client, apiKey };
}

/** A tenant subscribed to `receiver`, one work in it; returns what the writes need. */
async function subscribedWork(api: WorksApiClient, receiver: Receiver) {
  const { tenant } = unwrap(await api.createTenant({ body: { name: 'Process Inc' } }));
  const { webhookEndpoint } = unwrap(
    await api.createWebhookEndpoint({ params: { path: { tenant_id: tenant.id } }, body: { url: receiver.url } }),
  );
  const { work } = unwrap(await api.createWork({ params: { path: { tenant_id: tenant.id } }, body: { name: 'Work' } }));
  return { tenantId: tenant.id, workId: work.id, secret: webhookEndpoint.secret };
}

/** A request and its confirmation: two events. */
async function requestAndConfirm(api: WorksApiClient, tenantId: string, workId: string) {
  const path = { tenant_id: tenantId, work_id: workId };
  const { request } = unwrap(
    await api.createRequest({ params: { path }, body: { title: 'T', recipient: { email: 'r@example.com' } } }),
  );
  unwrap(await api.confirmRequest({ params: { path: { ...path, id: request.id } } }));
}

const servers: ServerProcess[] = [];
let receiver: Receiver;
beforeEach(async () => (receiver = await startReceiver()));
afterEach(async () => {
  await killAll(servers);
  await receiver.close();
});
afterAll(() => removeDataDirs());

it('delivers every committed event after a kill -9, once the server is back', async () => {
  const env = { ...(await databaseEnv()), ...webhookEnv };
  // The first process only writes (no dispatcher), so every event is still in the outbox when it is killed.
  const writer = await spawnServer({ ...env, WEBHOOK_DISPATCHER: 'false' });
  servers.push(writer);
  const { api } = await userOn(writer.baseUrl);
  const { tenantId, workId, secret } = await subscribedWork(api, receiver);
  for (let i = 0; i < 10; i++) await requestAndConfirm(api, tenantId, workId);
  writer.child.kill('SIGKILL');
  await writer.exited;
  expect(receiver.received).toHaveLength(0);

  servers.push(await spawnServer(env));
  const received = await receiver.waitFor(20, 30_000);
  const events = received.map(({ body, headers }) => verifyWebhook(body, headers as Record<string, string>, secret));
  expect(events.filter((event) => event.type === 'request.created')).toHaveLength(10);
  expect(events.filter((event) => event.type === 'request.confirmed')).toHaveLength(10);
  expect(new Set(events.map((event) => event.id)).size).toBe(20);
  // Two spawned servers and the receiver's own 30 s wait: jest's default 30 s fired first on a busy machine.
}, 90_000);

const onPostgres = process.env.DATABASE_URL ? it : it.skip;
onPostgres(
  'two server processes on PostgreSQL deliver each event once',
  async () => {
    const env = { ...(await databaseEnv()), ...webhookEnv };
    const [a, b] = await Promise.all([spawnServer(env), spawnServer(env)]);
    servers.push(a, b);
    const { api: apiA, apiKey } = await userOn(a.baseUrl);
    const { tenantId, workId, secret } = await subscribedWork(apiA, receiver);
    // The same key works on both processes: they share the database.
    const apiB = createClient({ baseUrl: b.baseUrl, apiKey, retry: false });
    // Writes through both processes at once: both dispatchers fan out and claim from the same tables.
    await Promise.all(
      Array.from({ length: 20 }, (_, i) => requestAndConfirm(i % 2 === 0 ? apiA : apiB, tenantId, workId)),
    );
    const received = await receiver.waitFor(40, 30_000);
    const ids = received.map(({ body, headers }) => verifyWebhook(body, headers as Record<string, string>, secret).id);
    expect(new Set(ids).size).toBe(40);
    expect(ids).toHaveLength(40);
    expect(a.lines.some((line) => line.msg?.startsWith('webhooks: dispatcher round failed'))).toBe(false);
    expect(b.lines.some((line) => line.msg?.startsWith('webhooks: dispatcher round failed'))).toBe(false);
  },
  90_000,
);
