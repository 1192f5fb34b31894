import { createTenant, createWork } from '../support/fixtures';
import { startTestServer, type TestServer, type TestUser } from '../support/server';

/** Slugs over HTTP: derived once, unique (tenants service-wide, works per tenant), suffixed -2, -3 on collision. */
let server: TestServer;
let ada: TestUser;
let bob: TestUser;

beforeAll(async () => {
  server = await startTestServer();
  ada = await server.createUser('ada');
  bob = await server.createUser('bob');
});
afterAll(() => server.close());

describe('slugs', () => {
  it('suffixes colliding tenant slugs across users, whatever the accents and symbols', async () => {
    const unique = `Zoë ${Date.now()}`;
    const base = `zoe-${unique.split(' ')[1]}`;
    const first = await createTenant(ada, unique);
    const second = await createTenant(bob, `zoe ${unique.split(' ')[1]}!`);
    const third = await createTenant(ada, `ZOË — ${unique.split(' ')[1]}`);
    expect([first.slug, second.slug, third.slug]).toEqual([base, `${base}-2`, `${base}-3`]);
  });

  it('numbers a colliding tenant slug past the highest number a tenant of its base already took', async () => {
    const name = `Numbered ${Date.now().toString(36)} x`;
    // A slug that ends in a number raises its base's counter (a trigger on tenants), so the base's next collision
    // takes 6, not 2.
    const five = await createTenant(ada, `${name} 5`);
    const first = await createTenant(bob, name);
    expect(five.slug).toBe(`${first.slug}-5`);
    const second = await createTenant(ada, name);
    expect(second.slug).toBe(`${first.slug}-6`);
  });

  it('numbers a colliding work slug past the highest number a work of its base in the tenant already took', async () => {
    const tenant = await createTenant(ada, 'Numbered works');
    const other = await createTenant(ada, 'Numbered works elsewhere');
    expect((await createWork(ada, tenant.id, 'Part 7')).slug).toBe('part-7');
    expect((await createWork(ada, tenant.id, 'Part')).slug).toBe('part');
    expect((await createWork(ada, tenant.id, 'part')).slug).toBe('part-8');
    // Another tenant's counter for the same base is its own.
    expect((await createWork(ada, other.id, 'Part')).slug).toBe('part');
    expect((await createWork(ada, other.id, 'Part')).slug).toBe('part-2');
  });

  it('gives concurrent creations with the same name distinct slugs', async () => {
    const name = `Race ${Date.now()}`;
    const tenants = await Promise.all(Array.from({ length: 5 }, () => createTenant(ada, name)));
    expect(new Set(tenants.map((t) => t.slug)).size).toBe(5);
  });

  it('scopes work slugs to their tenant and falls back to "work"', async () => {
    const one = await createTenant(ada, 'Slug scope one');
    const two = await createTenant(ada, 'Slug scope two');
    expect((await createWork(ada, one.id, 'Crème brûlée')).slug).toBe('creme-brulee');
    expect((await createWork(ada, one.id, 'creme  BRULEE')).slug).toBe('creme-brulee-2');
    expect((await createWork(ada, two.id, 'Crème brûlée')).slug).toBe('creme-brulee');
    expect((await createWork(ada, one.id, '東京')).slug).toBe('work');
    expect((await createWork(ada, one.id, '🚀')).slug).toBe('work-2');
  });

  it('never changes a slug on rename', async () => {
    const tenant = await createTenant(ada, 'Before rename');
    const res = await ada.client.PATCH('/tenants/{tenant_id}', {
      params: { path: { tenant_id: tenant.id } },
      body: { name: 'After rename' },
    });
    expect(res.data?.tenant).toMatchObject({ name: 'After rename', slug: tenant.slug });
  });
});
