import { createRequest, createTenant, createWork, subscribe } from '../support/fixtures';
import { startReceiver } from '../support/receiver';
import { startTestServer, type TestServer } from '../support/server';

/**
 * One tenant's slow endpoints cannot hold the others' deliveries. A tenant with as many endpoints as its
 * cap allows, all at a receiver that accepts and never answers (a tarpit), has far more deliveries due than the
 * dispatcher has slots; another tenant's event still arrives within a second, because each tenant has at most
 * WEBHOOK_MAX_IN_FLIGHT_PER_TENANT attempts in flight and the claim takes every tenant's oldest due delivery first.
 */
const ENDPOINTS = 20; // MAX_WEBHOOK_ENDPOINTS_PER_TENANT's default
const tenants: string[] = [];
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({
    limits: { webhookEndpointsPerTenant: ENDPOINTS },
    // The production defaults: 64 in flight, 8 per tenant, 10 s per attempt.
    webhooks: { onlyTenants: () => tenants },
  });
});
afterAll(() => server.close());

it("a tenant whose endpoints all hang does not delay another tenant's delivery by more than a second", async () => {
  const tarpit = await startReceiver(() => {}); // accepts, reads the request, never answers
  const arrivals: number[] = [];
  const fine = await startReceiver((_received, _index, res) => {
    arrivals.push(Date.now());
    res.end('ok');
  });
  try {
    const mallory = await server.createUser('mallory');
    const slow = await createTenant(mallory, 'Tarpit Ltd');
    tenants.push(slow.id);
    for (let i = 0; i < ENDPOINTS; i++) await subscribe(mallory, slow.id, `${tarpit.url}?n=${i}`);
    // 5 events × 20 endpoints = 100 deliveries due, more than the dispatcher's 64 slots; none ever answered.
    const slowWork = await createWork(mallory, slow.id);
    for (let i = 0; i < 5; i++) await createRequest(mallory, slow.id, slowWork.id);
    await tarpit.waitFor(8, 15_000);

    const ada = await server.createUser('ada');
    const calm = await createTenant(ada, 'Calm Inc');
    tenants.push(calm.id);
    await subscribe(ada, calm.id, fine.url);
    const calmWork = await createWork(ada, calm.id);
    await createRequest(ada, calm.id, calmWork.id);
    const [received] = await fine.waitFor(1, 15_000);
    const event = JSON.parse(received!.body) as { type: string; createdAt: string };
    expect(event.type).toBe('request.created');
    // Still in flight: the tarpit's attempts (10 s each) have not finished.
    expect(tarpit.received.length).toBeGreaterThanOrEqual(8);
    expect(arrivals[0]! - Date.parse(event.createdAt)).toBeLessThan(1000);
  } finally {
    await tarpit.close();
    await fine.close();
  }
}, 60_000);
