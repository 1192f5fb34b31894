import { createSocket, type Socket } from 'node:dgram';
import { dnsLookup } from '../../src/webhooks/resolver';
import { createRequest, createTenant, createWork, ok, subscribe } from '../support/fixtures';
import { startReceiver } from '../support/receiver';
import { startTestServer, type TestServer } from '../support/server';

/**
 * The host name's lookup is part of the attempt, and runs off libuv's thread pool. The dispatcher
 * resolves with c-ares against a name server on loopback that reads every query and never answers (a UDP socket
 * that drops them): one tenant's deliveries to such a host end at the attempt's deadline, cut off mid-lookup, while
 * another tenant's deliveries, to an IP literal and to `localhost` (neither of which is queried), go through.
 */
const TIMEOUT_MS = 1500;
const tenants: string[] = [];
const queried: string[] = [];
let blackHole: Socket;
let server: TestServer;

/** The name a DNS query asks for (its labels, from byte 12). */
function nameOf(query: Buffer): string {
  const labels: string[] = [];
  for (let at = 12; query[at]! > 0; at += 1 + query[at]!)
    labels.push(query.subarray(at + 1, at + 1 + query[at]!).toString('ascii'));
  return labels.join('.');
}

beforeAll(async () => {
  blackHole = createSocket('udp4');
  blackHole.on('message', (query) => queried.push(nameOf(query)));
  await new Promise<void>((resolve) => blackHole.bind(0, '127.0.0.1', resolve));
  const { port } = blackHole.address();
  server = await startTestServer({
    webhooks: {
      manual: true,
      onlyTenants: () => tenants,
      timeoutMs: TIMEOUT_MS,
      lookup: dnsLookup({ servers: [`127.0.0.1:${port}`] }),
    },
  });
});
afterAll(async () => {
  await server.close();
  await new Promise<void>((resolve) => blackHole.close(resolve));
});

it("a host whose name server never answers fails at the attempt's deadline; another tenant's deliveries go through", async () => {
  const arrivals: number[] = [];
  const fine = await startReceiver((_received, _index, res) => {
    arrivals.push(performance.now());
    res.end('ok');
  });
  try {
    const mallory = await server.createUser('mallory');
    const slow = await createTenant(mallory, 'Slow DNS Ltd');
    tenants.push(slow.id);
    const hanging = await subscribe(mallory, slow.id, 'http://never-answers.test/hooks');
    const slowWork = await createWork(mallory, slow.id);
    for (let i = 0; i < 3; i++) await createRequest(mallory, slow.id, slowWork.id);

    const ada = await server.createUser('ada');
    const calm = await createTenant(ada, 'Calm Inc');
    tenants.push(calm.id);
    await subscribe(ada, calm.id, fine.url); // http://127.0.0.1:<port>/hooks
    await subscribe(ada, calm.id, fine.url.replace('127.0.0.1', 'localhost'));
    await createRequest(ada, calm.id, (await createWork(ada, calm.id)).id);

    const started = performance.now();
    expect(await server.dispatcher!.runOnce()).toBe(5);
    const finished = performance.now();

    // The calm tenant's two deliveries arrived while the lookups were still unanswered.
    expect(arrivals).toHaveLength(2);
    for (const arrival of arrivals) expect(arrival - started).toBeLessThan(TIMEOUT_MS);
    // The hanging ones took the attempt's deadline, no more (the round waits for them).
    expect(finished - started).toBeLessThan(TIMEOUT_MS + 1000);
    const deliveries = ok(
      await mallory.client.GET('/tenants/{tenant_id}/webhook-endpoints/{endpoint_id}/deliveries', {
        params: { path: { tenant_id: slow.id, endpoint_id: hanging.id } },
      }),
    ).deliveries;
    expect(deliveries.totalCount).toBe(3);
    for (const { node: delivery } of deliveries.edges) {
      expect(delivery).toMatchObject({
        status: 'pending',
        attempts: 1,
        lastError: "no response within 1.5 s (the host name's lookup)",
      });
      expect(delivery.lastDurationMs).toBeGreaterThanOrEqual(TIMEOUT_MS - 10);
      expect(delivery.lastDurationMs).toBeLessThan(TIMEOUT_MS + 500);
    }
    // Only the host name was asked for: the IP literal and localhost never reach a name server.
    expect(queried.length).toBeGreaterThan(0);
    expect(new Set(queried)).toEqual(new Set(['never-answers.test']));
  } finally {
    await fine.close();
  }
}, 30_000);
