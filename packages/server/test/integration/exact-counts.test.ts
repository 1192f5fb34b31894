import { sessionOf } from '@works-api/prisma/seed';
import { createRequest, createTenant, createWork } from '../support/fixtures';
import { startTestServer, type TestServer, type TestUser } from '../support/server';

/**
 * Every `totalCount` is a count the database keeps (prisma/src/counts.ts), and it must be exact. After a
 * concurrent mix of creations, discards and restores, request actions, member changes and API keys, sent all at
 * once, every list's `totalCount` equals a `count(*)` of the same rows. (No full `recount_rows()` here: it holds
 * off the writers of every test file sharing the database; the dump-restore test runs it.) Runs on PGlite and on PostgreSQL (where the statements really are concurrent).
 */
let server: TestServer;
let owner: TestUser;
let others: TestUser[];
let tenantId: string;

beforeAll(async () => {
  // 100 tenants of one name below: room for them under the per-user cap.
  server = await startTestServer({ webhooks: { manual: true }, limits: { tenantsPerUser: 1000 } });
  owner = await server.createUser('counted-owner');
  others = [];
  for (let i = 0; i < 4; i++) others.push(await server.createUser(`counted-${i}`));
  tenantId = (await createTenant(owner, 'Counted')).id;
});
afterAll(() => server.close());

interface Connection {
  totalCount: number;
  edges: unknown[];
}

async function totalCount(path: string, apiKey = owner.apiKey): Promise<number> {
  const res = await server.call(`${path}${path.includes('?') ? '&' : '?'}limit=1`, { apiKey });
  expect(res.status).toBe(200);
  const body = await res.json<Record<string, Connection>>();
  return Object.values(body)[0]!.totalCount;
}

async function countRows(sql: string, values: unknown[]): Promise<number> {
  const [row] = await sessionOf(server.database).query<{ n: number }>(`SELECT count(*)::int AS n FROM ${sql}`, values);
  return Number(row!.n);
}

test('every totalCount equals count(*) after a concurrent mix of changes', async () => {
  // Set-up one at a time; then the mix all at once.
  const works: Array<{ id: string }> = [];
  for (let i = 0; i < 6; i++) works.push(await createWork(owner, tenantId, `Work ${i % 3}`));
  const requests: Array<{ id: string }> = [];
  for (let i = 0; i < 12; i++) requests.push(await createRequest(owner, tenantId, works[i % 2]!.id));
  const requestPath = (i: number) => `/v1/tenants/${tenantId}/works/${works[i % 2]!.id}/requests/${requests[i]!.id}`;
  const requestsOf = (i: number) => `/v1/tenants/${tenantId}/works/${works[i % 2]!.id}/requests`;
  const members = `/v1/tenants/${tenantId}/members`;

  // Each kind of change at least twice on the same rows, so that they race. Every answer counts (a 409 or, on a
  // loaded machine, a 503 changes nothing, and the counts must say so too); only a 500 is a failure.
  const mix: Array<Promise<{ status: number }>> = [];
  for (const [i, work] of works.entries()) {
    const path = `/v1/tenants/${tenantId}/works/${work.id}`;
    if (i >= 2) mix.push(server.callAs(owner, 'DELETE', path), server.callAs(owner, 'DELETE', path));
    if (i >= 2 && i % 2 === 0) mix.push(server.callAs(owner, 'PUT', `${path}/undiscard`));
  }
  const actions = [
    ['PUT', 'confirm'],
    ['DELETE', 'cancel'],
    ['PUT', 'early_validate'],
  ] as const;
  for (let i = 0; i < requests.length; i++) {
    const [method, action] = actions[i % 3]!;
    mix.push(
      server.callAs(owner, method, `${requestPath(i)}/${action}`),
      server.callAs(owner, 'DELETE', `${requestPath(i)}/cancel`),
    );
  }
  for (let i = 0; i < 6; i++) {
    mix.push(
      server.callAs(owner, 'POST', requestsOf(i), { title: 'Raced', recipient: { email: 'raced@example.com' } }),
    );
    mix.push(server.callAs(owner, 'POST', `/v1/tenants/${tenantId}/works`, { name: 'Work 1' }));
  }
  for (const [i, user] of others.entries()) {
    mix.push(
      server.callAs(owner, 'POST', members, { email: user.email, role: 'member' }).then(async (added) => {
        // Half of them are removed again while the rest of the mix runs.
        if (added.status !== 201 || i % 2 === 1) return added;
        const { member } = added.body as { member: { user: { id: string } } };
        return server.callAs(owner, 'DELETE', `${members}/${member.user.id}`);
      }),
    );
    mix.push(
      server.callAs(user, 'POST', '/v1/tenants', { name: 'Counted' }),
      server.callAs(user, 'POST', '/v1/tenants', { name: 'Counted' }),
    );
    mix.push(server.callAs(user, 'POST', '/v1/api-keys', { name: 'second' }));
  }
  const statuses = (await Promise.all(mix)).map((res) => res.status);
  expect(statuses.filter((status) => status >= 500 && status !== 503)).toEqual([]);
  expect(statuses.filter((status) => status < 300).length).toBeGreaterThan(0);

  const tenant = `/v1/tenants/${tenantId}`;
  const tenantBody = (await server.callAs(owner, 'GET', tenant)).body as { tenant: { works: Connection } };
  const kept = await countRows('works WHERE tenant_id = $1::uuid AND discarded_at IS NULL', [tenantId]);
  expect(tenantBody.tenant.works.totalCount).toBe(kept);
  expect(await totalCount(`${tenant}/works`)).toBe(kept);
  expect(await totalCount(`${tenant}/works?discarded=true`)).toBe(
    await countRows('works WHERE tenant_id = $1::uuid AND discarded_at IS NOT NULL', [tenantId]),
  );
  expect(await totalCount(`${tenant}/works?discarded=all`)).toBe(
    await countRows('works WHERE tenant_id = $1::uuid', [tenantId]),
  );
  expect(await totalCount(`${tenant}/members`)).toBe(
    await countRows('memberships WHERE tenant_id = $1::uuid', [tenantId]),
  );
  for (const work of works.slice(0, 2)) {
    const requestsOf = `${tenant}/works/${work.id}/requests`;
    expect(await totalCount(requestsOf)).toBe(await countRows('requests WHERE work_id = $1::uuid', [work.id]));
    for (const status of ['pending', 'confirmed', 'validated', 'cancelled']) {
      expect(await totalCount(`${requestsOf}?status=${status}`)).toBe(
        await countRows('requests WHERE work_id = $1::uuid AND status = $2::request_status', [work.id, status]),
      );
    }
  }
  for (const user of [owner, ...others]) {
    expect(await totalCount('/v1/tenants', user.apiKey)).toBe(
      await countRows('memberships WHERE user_id = $1::uuid', [user.id]),
    );
    expect(await totalCount('/v1/api-keys', user.apiKey)).toBe(
      await countRows('api_keys WHERE user_id = $1::uuid', [user.id]),
    );
  }
}, 120_000);

test('100 concurrent creations of one tenant name all succeed, under 100 different slugs', async () => {
  const name = `Popular ${Date.now().toString(36)}`;
  const created = await Promise.all(Array.from({ length: 100 }, () => createTenant(owner, name)));
  const slugs = new Set(created.map((tenant) => tenant.slug));
  expect(slugs.size).toBe(100);
  const base = created.find((tenant) => !/-\d+$/.test(tenant.slug))!.slug;
  expect([...slugs].sort()).toEqual([base, ...Array.from({ length: 99 }, (_, i) => `${base}-${i + 2}`)].sort());
}, 120_000);

test("a work's request counts are striped: concurrent writers add to rows of their own, summed exactly on read", async () => {
  const work = await createWork(owner, tenantId, 'Striped');
  const requestsOf = `/v1/tenants/${tenantId}/works/${work.id}/requests`;
  const created = await Promise.all(
    Array.from({ length: 24 }, (_, i) =>
      server.callAs(owner, 'POST', requestsOf, { title: `Striped ${i}`, recipient: { email: `s${i}@example.com` } }),
    ),
  );
  expect(created.map((res) => res.status)).toEqual(created.map(() => 201));
  const ids = created.map((res) => (res.body as { request: { id: string } }).request.id);
  await Promise.all(ids.slice(0, 8).map((id) => server.callAs(owner, 'PUT', `${requestsOf}/${id}/confirm`)));
  const slots = await countRows('work_counts WHERE work_id = $1::uuid', [work.id]);
  expect(slots).toBeGreaterThanOrEqual(1);
  expect(slots).toBeLessThanOrEqual(16);
  // PGlite is one session: one slot. PostgreSQL's pool spreads the writes over several.
  if (server.database.kind === 'postgres') expect(slots).toBeGreaterThan(1);
  expect(await totalCount(requestsOf)).toBe(24);
  expect(await totalCount(`${requestsOf}?status=pending`)).toBe(16);
  expect(await totalCount(`${requestsOf}?status=confirmed`)).toBe(8);
});
