import { createLogger } from '../../src/observability/logger';
import { Dispatcher } from '../../src/webhooks/dispatcher';
import { createRequest, createTenant, createWork, subscribe } from '../support/fixtures';
import { startReceiver } from '../support/receiver';
import { startTestServer, type TestServer } from '../support/server';

/**
 * WEBHOOK_MAX_IN_FLIGHT_PER_TENANT holds across processes (WEB_CONCURRENCY workers, `pnpm worker`), not
 * per dispatcher: two dispatchers on one database count the tenant's leased deliveries in the database when they
 * claim. Each round here is driven by hand (`runOnce`, which waits for its attempts); the tarpit accepts and never
 * answers, so an attempt lasts the 2 s timeout.
 */
const ENDPOINTS = 20;
const CAP = 8;
const tenants: string[] = [];
let server: TestServer;
let second: Dispatcher;

beforeAll(async () => {
  const webhooks = { onlyTenants: () => tenants, timeoutMs: 2000, maxInFlightPerTenant: CAP };
  server = await startTestServer({
    limits: { webhookEndpointsPerTenant: ENDPOINTS },
    webhooks: { ...webhooks, manual: true },
  });
  // Another process's dispatcher, as far as the database can tell: its own instance, sharing nothing in memory.
  second = new Dispatcher({
    ...webhooks,
    db: server.database,
    logger: createLogger('silent'),
    allowPrivateUrls: true,
  });
});
afterAll(() => server.close());

it("two dispatchers together keep a tenant's attempts in flight within the cap, and still serve the others", async () => {
  const tarpit = await startReceiver(() => {}); // accepts, reads the request, never answers
  const fine = await startReceiver();
  try {
    const mallory = await server.createUser('mallory');
    const slow = await createTenant(mallory, 'Tarpit Ltd');
    tenants.push(slow.id);
    for (let i = 0; i < ENDPOINTS; i++) await subscribe(mallory, slow.id, `${tarpit.url}?n=${i}`);
    // 5 events × 20 endpoints = 100 deliveries due.
    const slowWork = await createWork(mallory, slow.id);
    for (let i = 0; i < 5; i++) await createRequest(mallory, slow.id, slowWork.id);
    const first = server.dispatcher!;

    // One dispatcher's attempts are in flight (hanging) when the other claims: it takes none of the tenant's.
    const firstRound = first.runOnce();
    await tarpit.waitFor(CAP);
    expect(await second.runOnce()).toBe(0);
    expect(await firstRound).toBe(CAP);
    expect(tarpit.received).toHaveLength(CAP);

    // Both claim at once (the first round's attempts have failed, their retries are not due yet): the cap holds
    // for the pair, and another tenant's delivery goes out in the same round.
    const ada = await server.createUser('ada');
    const calm = await createTenant(ada, 'Calm Inc');
    tenants.push(calm.id);
    await subscribe(ada, calm.id, fine.url);
    await createRequest(ada, calm.id, (await createWork(ada, calm.id)).id);
    const [a, b] = await Promise.all([first.runOnce(), second.runOnce()]);
    expect(a + b).toBe(CAP + 1);
    expect(tarpit.received).toHaveLength(2 * CAP);
    expect(fine.received).toHaveLength(1);
  } finally {
    await tarpit.close();
    await fine.close();
  }
}, 60_000);
