import { randomBytes } from 'node:crypto';
import { insertSession, newId } from '@works-api/prisma';
import { loadSpec } from '../../src/http/spec';
import { createRequest, createTenant, createWork, ok } from '../support/fixtures';
import { addMember, inviteEmail } from '../support/roles';
import { startTestServer, type TestServer, type TestUser } from '../support/server';

/**
 * Every operation that changes something, called with each of its path ids replaced by one that names nothing of
 * the caller's: a malformed id, and a real id of another tenant, as we write it and in upper case.
 * Each must be refused (400 or 404), and no row of either tenant may change. It was written after
 * `DELETE …/webhook-endpoints/not-an-id` deleted every endpoint of the tenant before answering 404.
 */
let server: TestServer;

interface Side {
  user: TestUser;
  ids: Record<string, string>;
}
let ada: Side;
let eve: Side;

/** A body each operation accepts, so that the call gets past validation to the id. */
const bodies: Record<string, unknown> = {
  revokeApiKey: undefined,
  revokeSession: undefined,
  updateTenant: { name: 'Renamed' },
  addMember: { email: 'someone-new@example.com', role: 'member' },
  updateMember: { role: 'admin' },
  removeMember: undefined,
  deleteInvitation: undefined,
  acceptInvitation: undefined,
  declineInvitation: undefined,
  createWork: { name: 'Another work' },
  updateWork: { name: 'Renamed work' },
  discardWork: undefined,
  undiscardWork: undefined,
  createRequest: { title: 'Another request', recipient: { email: 'rae@example.com' } },
  createRequestBatch: { defaults: { title: 'Another batch' }, items: [{ recipient: { email: 'rae@example.com' } }] },
  cancelRequest: { reason: 'no longer needed' },
  confirmRequest: { answer: 'yes' },
  earlyValidateRequest: undefined,
  validateRequest: undefined,
  resendRequest: undefined,
  createWebhookEndpoint: { url: 'http://127.0.0.1:9/hooks' },
  updateWebhookEndpoint: { description: 'changed' },
  deleteWebhookEndpoint: undefined,
  rotateWebhookEndpointSecret: undefined,
  testWebhookEndpoint: undefined,
  retryWebhookDelivery: undefined,
};

async function populate(user: TestUser, name: string): Promise<Side> {
  const tenant = await createTenant(user, name);
  const member = await server.createUser(`${name.split(' ')[0]!.toLowerCase()}-member`);
  await addMember(user, tenant.id, member, 'member');
  const work = await createWork(user, tenant.id);
  const request = await createRequest(user, tenant.id, work.id);
  const tenantPath = { params: { path: { tenant_id: tenant.id } } };
  const endpoints = [];
  for (const description of ['one', 'two', 'three']) {
    endpoints.push(
      ok(
        await user.client.POST('/tenants/{tenant_id}/webhook-endpoints', {
          ...tenantPath,
          body: { url: 'http://127.0.0.1:9/hooks', description },
        }),
      ).webhookEndpoint,
    );
  }
  const endpointId = endpoints[0]!.id;
  const { delivery } = ok(
    await user.client.POST('/tenants/{tenant_id}/webhook-endpoints/{endpoint_id}/test', {
      params: { path: { tenant_id: tenant.id, endpoint_id: endpointId } },
    }),
  );
  const apiKey = ok(await user.client.POST('/api-keys', { body: { name: 'second' } })).apiKey;
  // A signed-in browser (a session as a sign-in makes it; sessions.test.ts signs in by email).
  const sessionId = newId();
  const now = new Date();
  await insertSession(server.database, {
    ...{ id: sessionId, userId: user.id, tokenHash: randomBytes(32).toString('hex'), userAgent: name, now },
    ...{ expiresAt: new Date(now.getTime() + 86_400_000), replacedTokenHash: null, maxPerUser: 50 },
  });
  // Three pending invitations: a DELETE with a bad id must not take any of them (nor the other tenant's).
  const invitations = [];
  for (const who of ['one', 'two', 'three'])
    invitations.push(await inviteEmail(user, tenant.id, `${who}-${tenant.id}@example.com`, 'member'));
  return {
    user,
    ids: {
      tenant_id: tenant.id,
      work_id: work.id,
      id: request.id,
      user_id: member.id,
      endpoint_id: endpointId,
      delivery_id: delivery.id,
      api_key_id: apiKey.id,
      session_id: sessionId,
      invitation_id: invitations[0]!.id,
    },
  };
}

/** Every row the two tenants and their users own, as one string (API keys without their last use). */
async function snapshot(): Promise<string> {
  const tenants = [ada.ids.tenant_id, eve.ids.tenant_id];
  const users = [ada.user.id, eve.user.id, ada.ids.user_id, eve.ids.user_id];
  const rows = await server.database.prisma.$queryRawUnsafe<Array<{ t: string; rows: string | null }>>(
    `SELECT 'tenants' AS t, string_agg(x::text, '|' ORDER BY x.id) AS rows FROM tenants x WHERE id = ANY($1::uuid[])
     UNION ALL SELECT 'memberships', string_agg(x::text, '|' ORDER BY x.id) FROM memberships x
       WHERE tenant_id = ANY($1::uuid[])
     UNION ALL SELECT 'invitations', string_agg(x::text, '|' ORDER BY x.id) FROM invitations x
       WHERE tenant_id = ANY($1::uuid[])
     UNION ALL SELECT 'works', string_agg(x::text, '|' ORDER BY x.id) FROM works x WHERE tenant_id = ANY($1::uuid[])
     UNION ALL SELECT 'requests', string_agg(x::text, '|' ORDER BY x.id) FROM requests x
       WHERE work_id IN (SELECT id FROM works WHERE tenant_id = ANY($1::uuid[]))
     UNION ALL SELECT 'request_events', string_agg(x::text, '|' ORDER BY x.id) FROM request_events x
       WHERE request_id IN (SELECT r.id FROM requests r JOIN works w ON w.id = r.work_id
                            WHERE w.tenant_id = ANY($1::uuid[]))
     UNION ALL SELECT 'webhook_endpoints', string_agg(x::text, '|' ORDER BY x.id) FROM webhook_endpoints x
       WHERE tenant_id = ANY($1::uuid[])
     UNION ALL SELECT 'webhook_events', string_agg(x::text, '|' ORDER BY x.id) FROM webhook_events x
       WHERE tenant_id = ANY($1::uuid[])
     UNION ALL SELECT 'webhook_deliveries', string_agg(x::text, '|' ORDER BY x.id) FROM webhook_deliveries x
       WHERE endpoint_id IN (SELECT id FROM webhook_endpoints WHERE tenant_id = ANY($1::uuid[]))
     UNION ALL SELECT 'users', string_agg(x::text, '|' ORDER BY x.id) FROM users x WHERE id = ANY($2::uuid[])
     UNION ALL SELECT 'api_keys', string_agg(concat_ws(',', id, name, prefix, secret_hash, revoked_at), '|' ORDER BY id)
       FROM api_keys WHERE user_id = ANY($2::uuid[])
     UNION ALL SELECT 'sessions', string_agg(concat_ws(',', id, user_id, token_hash, expires_at), '|' ORDER BY id)
       FROM sessions WHERE user_id = ANY($2::uuid[])
     UNION ALL SELECT 'idempotency_keys', string_agg(x::text, '|' ORDER BY x.key) FROM idempotency_keys x
       WHERE scope = ANY($2::text[])`,
    tenants,
    users,
  );
  // In table order: PostgreSQL may return a UNION ALL's branches in any order (a parallel append does).
  return rows
    .map((row) => `${row.t}: ${row.rows ?? ''}`)
    .sort()
    .join('\n');
}

beforeAll(async () => {
  server = await startTestServer();
  ada = await populate(await server.createUser('ada'), 'Ada Labs');
  eve = await populate(await server.createUser('eve'), 'Eve Corp');
}, 60_000);
afterAll(() => server.close());

const spec = loadSpec();
const mutating = spec.operations.filter((operation) => operation.method !== 'get' && operation.path.includes('{'));

const variants = {
  malformed: () => 'not-an-id',
  foreign: (name: string) => eve.ids[name]!,
  // An upper-case UUID is the same id (RFC 9562): another tenant's, so written, is still not the caller's.
  'foreign in upper case': (name: string) => eve.ids[name]!.toUpperCase(),
};

const cases = mutating.flatMap((operation) =>
  [...operation.path.matchAll(/\{([^}]+)\}/g)].flatMap(([, name]) =>
    Object.entries(variants).map(
      ([variant, make]) => [`${operation.operationId}: ${variant} ${name}`, operation, name!, make] as const,
    ),
  ),
);

it('has a valid body for every operation that changes something', () => {
  expect(mutating.map((operation) => operation.operationId).sort()).toEqual(Object.keys(bodies).sort());
});

describe('an id that is not the caller’s changes nothing', () => {
  it.each(cases)('%s', async (_what, operation, name, make) => {
    const before = await snapshot();
    const path = operation.path.replace(/\{([^}]+)\}/g, (_match, param: string) =>
      encodeURIComponent(param === name ? make(param) : ada.ids[param]!),
    );
    const body = bodies[operation.operationId];
    const res = await server.call(spec.basePath + path, {
      method: operation.method.toUpperCase(),
      apiKey: ada.user.apiKey,
      ...(body !== undefined && { json: body }),
    });
    expect([400, 404]).toContain(res.status);
    expect(await snapshot()).toBe(before);
  });
});

it('still has all three webhook endpoints of each tenant', async () => {
  for (const side of [ada, eve]) {
    const list = ok(
      await side.user.client.GET('/tenants/{tenant_id}/webhook-endpoints', {
        params: { path: { tenant_id: side.ids.tenant_id! } },
      }),
    );
    expect(list.webhookEndpoints.totalCount).toBe(3);
  }
});

it('still has all three invitations of each tenant', async () => {
  for (const side of [ada, eve]) {
    const list = ok(
      await side.user.client.GET('/tenants/{tenant_id}/invitations', {
        params: { path: { tenant_id: side.ids.tenant_id! } },
      }),
    );
    expect(list.invitations.totalCount).toBe(3);
  }
});
