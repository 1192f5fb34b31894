import { roleAtLeast, SCOPES, type Scope, scopeMinimumRole } from '../../src/domain/access';
import type { OperationId } from '../../src/handlers/types';
import { loadSpec, type SpecOperation } from '../../src/http/spec';
import { createRequest, createWork, ok } from '../support/fixtures';
import { addNewMember, inviteEmail, type RoleFixture, tenantWithRoles } from '../support/roles';
import { ADMIN_TOKEN, startTestServer, type TestServer } from '../support/server';
import { freshEmail } from '../support/fixtures';

/**
 * Who may call what: every operation of openapi/api.yaml × every kind of caller, with the exact status.
 * The operation list comes from the spec, so an operation added there without a row here fails the test.
 * Each cell uses valid input, so the caller is the only variable; destructive operations get fresh fixtures.
 */
const callers = ['owner', 'admin', 'member', 'nonMember', 'revokedKey', 'noKey', 'operatorToken'] as const;
type Caller = (typeof callers)[number];
type Row = Record<Caller, number>;

/** A row for an operation authenticated by API key: the four users' statuses; every other caller is 401. */
const byRole = (owner: number, admin: number, member: number, nonMember: number): Row => ({
  owner,
  admin,
  member,
  nonMember,
  revokedKey: 401,
  noKey: 401,
  operatorToken: 401,
});
/** Not tenant-scoped: any user with a valid key. */
const anyUser = (status: number): Row => byRole(status, status, status, status);

const expected: Record<OperationId, Row> = {
  // The operator route takes the ADMIN_TOKEN, never an API key, however powerful its holder.
  adminCreateUser: {
    owner: 401,
    admin: 401,
    member: 401,
    nonMember: 401,
    revokedKey: 401,
    noKey: 401,
    operatorToken: 201,
  },
  adminGetUser: {
    owner: 401,
    admin: 401,
    member: 401,
    nonMember: 401,
    revokedKey: 401,
    noKey: 401,
    operatorToken: 200,
  },
  getMe: anyUser(200),
  listApiKeys: anyUser(200),
  createApiKey: anyUser(201),
  revokeApiKey: anyUser(200),
  // Signing in needs no credential: whatever the caller sends in Authorization, the same answer (a forged link: 400).
  createSignIn: { ...anyUser(202), revokedKey: 202, noKey: 202, operatorToken: 202 },
  createSession: { ...anyUser(400), revokedKey: 400, noKey: 400, operatorToken: 400 },
  listSessions: anyUser(200),
  revokeAllSessions: anyUser(204),
  // A session id of no one's (API-key callers have none of their own here; sessions.test.ts ends real ones).
  revokeSession: anyUser(404),
  listTenants: anyUser(200),
  createTenant: anyUser(201),
  getTenant: byRole(200, 200, 200, 404),
  updateTenant: byRole(200, 200, 403, 404),
  listMembers: byRole(200, 200, 200, 404),
  addMember: byRole(202, 202, 403, 404),
  getMember: byRole(200, 200, 200, 404),
  updateMember: byRole(200, 200, 403, 404),
  removeMember: byRole(204, 204, 403, 404),
  listInvitations: byRole(200, 200, 403, 404),
  deleteInvitation: byRole(204, 204, 403, 404),
  // One's own invitations, whatever one's roles elsewhere.
  listMyInvitations: anyUser(200),
  acceptInvitation: anyUser(200),
  declineInvitation: anyUser(204),
  listWorks: byRole(200, 200, 200, 404),
  createWork: byRole(201, 201, 201, 404),
  getWork: byRole(200, 200, 200, 404),
  updateWork: byRole(200, 200, 403, 404),
  discardWork: byRole(200, 200, 403, 404),
  undiscardWork: byRole(200, 200, 403, 404),
  listTenantRequests: byRole(200, 200, 200, 404),
  listRequests: byRole(200, 200, 200, 404),
  createRequest: byRole(201, 201, 201, 404),
  createRequestBatch: byRole(201, 201, 201, 404),
  getRequest: byRole(200, 200, 200, 404),
  listRequestEvents: byRole(200, 200, 200, 404),
  cancelRequest: byRole(200, 200, 200, 404),
  confirmRequest: byRole(200, 200, 200, 404),
  earlyValidateRequest: byRole(200, 200, 200, 404),
  validateRequest: byRole(200, 200, 200, 404),
  resendRequest: byRole(200, 200, 200, 404),
  // Webhook endpoints carry signing secrets and see every event of the tenant: owners and admins only.
  listWebhookEndpoints: byRole(200, 200, 403, 404),
  createWebhookEndpoint: byRole(201, 201, 403, 404),
  getWebhookEndpoint: byRole(200, 200, 403, 404),
  updateWebhookEndpoint: byRole(200, 200, 403, 404),
  deleteWebhookEndpoint: byRole(204, 204, 403, 404),
  rotateWebhookEndpointSecret: byRole(200, 200, 403, 404),
  testWebhookEndpoint: byRole(202, 202, 403, 404),
  listWebhookDeliveries: byRole(200, 200, 403, 404),
  listEvents: byRole(200, 200, 200, 404),
  retryWebhookDelivery: byRole(202, 202, 403, 404),
  // The recipient's operations take an answer token: an API key (or the operator token) opens no request.
  getRecipientRequest: { ...anyUser(404), revokedKey: 404, noKey: 401, operatorToken: 404 },
  answerRecipientRequest: { ...anyUser(404), revokedKey: 404, noKey: 401, operatorToken: 404 },
};

interface Input {
  params?: Record<string, string>;
  body?: unknown;
}

let server: TestServer;
let roles: RoleFixture;
let revokedKey: string;
let shared: { tenant_id: string; work_id: string; id: string };

const userOf = (caller: Caller) =>
  caller === 'owner' || caller === 'admin' || caller === 'member'
    ? roles[caller]
    : caller === 'nonMember'
      ? roles.stranger
      : undefined;

/** Valid input for each operation; what a cell changes is made for that cell alone. */
const inputs: Record<OperationId, (caller: Caller) => Promise<Input>> = {
  adminCreateUser: async () => ({ body: { email: freshEmail(), firstName: 'New', lastName: 'User' } }),
  adminGetUser: async () => ({ params: { user_id: roles.owner.id } }),
  getMe: async () => ({}),
  listApiKeys: async () => ({}),
  createApiKey: async () => ({ body: { name: 'Matrix key' } }),
  revokeApiKey: async (caller) => {
    // A user revokes a key of their own (a spare one, so the key in use keeps working for later cells).
    const holder = userOf(caller) ?? roles.owner;
    const spare = ok(await holder.client.POST('/api-keys', { body: { name: 'Spare' } })).apiKey;
    return { params: { api_key_id: spare.id } };
  },
  createSignIn: async () => ({ body: { email: freshEmail() } }),
  createSession: async () => ({ body: { token: 'A'.repeat(43) } }),
  listSessions: async () => ({}),
  revokeAllSessions: async () => ({}),
  revokeSession: async () => ({ params: { session_id: '0193a1b2-7c3d-7e4f-8a9b-0c1d2e3f4a5b' } }),
  listTenants: async () => ({}),
  createTenant: async () => ({ body: { name: 'Matrix tenant' } }),
  getTenant: async () => ({ params: { tenant_id: shared.tenant_id } }),
  updateTenant: async () => ({ params: { tenant_id: shared.tenant_id }, body: { name: 'Roles Inc' } }),
  listMembers: async () => ({ params: { tenant_id: shared.tenant_id } }),
  // An existing user's email: an invitation (202), as for any email.
  addMember: async () => ({
    params: { tenant_id: shared.tenant_id },
    body: { email: (await server.createUser('matrix-added')).email, role: 'member' },
  }),
  // Another member than the caller: reading someone else is what the role allows (the owner, who is in every row).
  getMember: async () => ({ params: { tenant_id: shared.tenant_id, user_id: roles.owner.id } }),
  updateMember: async () => ({
    params: { tenant_id: shared.tenant_id, user_id: await freshMember() },
    body: { role: 'admin' },
  }),
  removeMember: async () => ({ params: { tenant_id: shared.tenant_id, user_id: await freshMember() } }),
  listInvitations: async () => ({ params: { tenant_id: shared.tenant_id } }),
  deleteInvitation: async () => ({ params: { tenant_id: shared.tenant_id, invitation_id: await freshInvitation() } }),
  listMyInvitations: async () => ({}),
  acceptInvitation: async (caller) => ({ params: { invitation_id: await invitationTo(caller) } }),
  declineInvitation: async (caller) => ({ params: { invitation_id: await invitationTo(caller) } }),
  listWorks: async () => ({ params: { tenant_id: shared.tenant_id } }),
  createWork: async () => ({
    params: { tenant_id: shared.tenant_id },
    body: { name: 'Matrix work', description: 'd' },
  }),
  getWork: async () => ({ params: { tenant_id: shared.tenant_id, work_id: shared.work_id } }),
  updateWork: async () => ({
    params: { tenant_id: shared.tenant_id, work_id: shared.work_id },
    body: { description: 'Updated by the matrix' },
  }),
  discardWork: async () => ({ params: { tenant_id: shared.tenant_id, work_id: await freshWork(false) } }),
  undiscardWork: async () => ({ params: { tenant_id: shared.tenant_id, work_id: await freshWork(true) } }),
  listTenantRequests: async () => ({ params: { tenant_id: shared.tenant_id } }),
  listRequests: async () => ({ params: { tenant_id: shared.tenant_id, work_id: shared.work_id } }),
  createRequest: async () => ({
    params: { tenant_id: shared.tenant_id, work_id: shared.work_id },
    body: { title: 'Matrix request', recipient: { email: 'recipient@example.com' } },
  }),
  createRequestBatch: async () => ({
    params: { tenant_id: shared.tenant_id, work_id: shared.work_id },
    body: { defaults: { title: 'Matrix batch' }, items: [{ recipient: { email: 'recipient@example.com' } }] },
  }),
  getRequest: async () => ({ params: shared }),
  listRequestEvents: async () => ({ params: shared }),
  cancelRequest: async () => ({ params: await freshRequest('pending'), body: { reason: 'Matrix' } }),
  confirmRequest: async () => ({ params: await freshRequest('pending'), body: { answer: 'Yes' } }),
  earlyValidateRequest: async () => ({ params: await freshRequest('pending') }),
  validateRequest: async () => ({ params: await freshRequest('confirmed') }),
  resendRequest: async () => ({ params: await freshRequest('pending') }),
  listWebhookEndpoints: async () => ({ params: { tenant_id: shared.tenant_id } }),
  // A URL nothing listens on: no dispatcher runs in this file, so nothing is sent anyway.
  createWebhookEndpoint: async () => ({
    params: { tenant_id: shared.tenant_id },
    body: { url: 'http://127.0.0.1:9/hooks' },
  }),
  getWebhookEndpoint: async () => ({ params: await freshEndpoint() }),
  updateWebhookEndpoint: async () => ({
    params: await freshEndpoint(),
    body: { description: 'Updated by the matrix' },
  }),
  deleteWebhookEndpoint: async () => ({ params: await freshEndpoint() }),
  rotateWebhookEndpointSecret: async () => ({ params: await freshEndpoint() }),
  testWebhookEndpoint: async () => ({ params: await freshEndpoint() }),
  listWebhookDeliveries: async () => ({ params: await freshEndpoint() }),
  listEvents: async () => ({ params: { tenant_id: shared.tenant_id } }),
  retryWebhookDelivery: async () => {
    const params = await freshEndpoint();
    const { delivery } = ok(
      await roles.owner.client.POST('/tenants/{tenant_id}/webhook-endpoints/{endpoint_id}/test', {
        params: { path: params },
      }),
    );
    return { params: { ...params, delivery_id: delivery.id } };
  },
  getRecipientRequest: async () => ({}),
  answerRecipientRequest: async () => ({ body: { answer: 'Yes' } }),
};

async function freshEndpoint() {
  const { webhookEndpoint } = ok(
    await roles.owner.client.POST('/tenants/{tenant_id}/webhook-endpoints', {
      params: { path: { tenant_id: shared.tenant_id } },
      body: { url: 'http://127.0.0.1:9/hooks' },
    }),
  );
  return { tenant_id: shared.tenant_id, endpoint_id: webhookEndpoint.id };
}

async function freshMember(): Promise<string> {
  return (await addNewMember(server, roles.owner, shared.tenant_id, 'member')).user.id;
}

async function freshInvitation(): Promise<string> {
  return (await inviteEmail(roles.owner, shared.tenant_id, freshEmail(), 'member')).id;
}

/** An invitation to the caller's email (the owner's for callers without a user), from a tenant of its own. */
async function invitationTo(caller: Caller): Promise<string> {
  const inviter = await server.createUser('matrix-inviter');
  const tenant = ok(await inviter.client.POST('/tenants', { body: { name: 'Inviting' } })).tenant;
  return (await inviteEmail(inviter, tenant.id, (userOf(caller) ?? roles.owner).email, 'member')).id;
}

async function freshWork(discarded: boolean): Promise<string> {
  const work = await createWork(roles.owner, shared.tenant_id, 'Matrix fresh work');
  if (discarded) {
    ok(
      await roles.owner.client.DELETE('/tenants/{tenant_id}/works/{work_id}', {
        params: { path: { tenant_id: shared.tenant_id, work_id: work.id } },
      }),
    );
  }
  return work.id;
}

async function freshRequest(status: 'pending' | 'confirmed') {
  const request = await createRequest(roles.owner, shared.tenant_id, shared.work_id);
  const path = { tenant_id: shared.tenant_id, work_id: shared.work_id, id: request.id };
  if (status === 'confirmed') {
    ok(
      await roles.owner.client.PUT('/tenants/{tenant_id}/works/{work_id}/requests/{id}/confirm', { params: { path } }),
    );
  }
  return path;
}

function authorizationOf(caller: Caller): string | undefined {
  if (caller === 'revokedKey') return `Bearer ${revokedKey}`;
  if (caller === 'operatorToken') return `Bearer ${ADMIN_TOKEN}`;
  if (caller === 'noKey') return undefined;
  return `Bearer ${userOf(caller)!.apiKey}`;
}

const spec = loadSpec();

function urlOf(operation: SpecOperation, params: Record<string, string> = {}): string {
  const path = operation.path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const value = params[name];
    if (value === undefined) throw new Error(`${operation.operationId}: no value for {${name}}`);
    return encodeURIComponent(value);
  });
  return spec.basePath + path;
}

beforeAll(async () => {
  // Every endpoint cell makes a fresh endpoint in one tenant: more than the default cap of 20 (limits.test.ts
  // tests the cap itself).
  server = await startTestServer({ limits: { webhookEndpointsPerTenant: 1_000 } });
  roles = await tenantWithRoles(server);
  const work = await createWork(roles.owner, roles.tenant.id, 'Shared work');
  const request = await createRequest(roles.owner, roles.tenant.id, work.id);
  shared = { tenant_id: roles.tenant.id, work_id: work.id, id: request.id };
  // The owner's own second key, revoked: a revoked key gets nothing, whoever holds it.
  const spare = ok(await roles.owner.client.POST('/api-keys', { body: { name: 'To revoke' } })).apiKey;
  ok(await roles.owner.client.DELETE('/api-keys/{api_key_id}', { params: { path: { api_key_id: spare.id } } }));
  revokedKey = spare.secret;
  await makeRestrictedKeys();
});
afterAll(() => server.close());

/**
 * The restricted-key dimension: each of the four users also calls every operation with a key lacking exactly the
 * operation's scope (every other scope its role allows) and with a key limited to another tenant of theirs (every
 * scope). The full key is the `byRole` columns above.
 */
const roleCallers = ['owner', 'admin', 'member', 'nonMember'] as const;
type RoleCaller = (typeof roleCallers)[number];
const keyKinds = ['withoutScope', 'otherTenant'] as const;
type KeyKind = (typeof keyKinds)[number];

/** Who answers what to a restricted key, for the operations whose path names no tenant. */
const outsideTenants: Partial<Record<OperationId, Record<KeyKind, number>>> = {
  // The operator's and the recipient's operations take no API key: a restricted one is no better than any.
  adminCreateUser: { withoutScope: 401, otherTenant: 401 },
  adminGetUser: { withoutScope: 401, otherTenant: 401 },
  getRecipientRequest: { withoutScope: 404, otherTenant: 404 },
  answerRecipientRequest: { withoutScope: 404, otherTenant: 404 },
  getMe: { withoutScope: 403, otherTenant: 200 },
  // A restricted key never manages keys or one's invitations.
  listApiKeys: { withoutScope: 403, otherTenant: 403 },
  createApiKey: { withoutScope: 403, otherTenant: 403 },
  revokeApiKey: { withoutScope: 403, otherTenant: 403 },
  listMyInvitations: { withoutScope: 403, otherTenant: 403 },
  acceptInvitation: { withoutScope: 403, otherTenant: 403 },
  declineInvitation: { withoutScope: 403, otherTenant: 403 },
  // Its own tenants only; and it makes none it could not reach.
  listTenants: { withoutScope: 403, otherTenant: 200 },
  createTenant: { withoutScope: 403, otherTenant: 403 },
  // Signing in takes no credential: a key sent along changes nothing (a forged link: 400).
  createSignIn: { withoutScope: 202, otherTenant: 202 },
  createSession: { withoutScope: 400, otherTenant: 400 },
  // Sessions are the account's (account:manage): a restricted key neither lists nor ends them.
  listSessions: { withoutScope: 403, otherTenant: 403 },
  revokeAllSessions: { withoutScope: 403, otherTenant: 403 },
  revokeSession: { withoutScope: 403, otherTenant: 403 },
};

/** The status a restricted key gets: without the scope, 403 whoever holds it; limited elsewhere, as a non-member. */
function expectedFor(operation: SpecOperation, kind: KeyKind): number {
  const outside = outsideTenants[operation.operationId];
  if (outside) return outside[kind];
  if (!operation.inTenant) throw new Error(`${operation.operationId}: no restricted-key row`);
  return kind === 'withoutScope' ? 403 : 404;
}

const roleOf = (caller: RoleCaller) => (caller === 'nonMember' ? undefined : caller);
/** The scopes a user in `caller`'s role may give a key (no tenant role: only those that need none). */
const grantable = (caller: RoleCaller): Scope[] =>
  SCOPES.filter((scope) => {
    const minimum = scopeMinimumRole[scope];
    const role = roleOf(caller);
    return scope !== 'account:manage' && (minimum === null || (role !== undefined && roleAtLeast(role, minimum)));
  });

/** Per role caller: its key lacking each scope, and its key limited to a tenant of its own other than the shared one. */
const restrictedKeys = {} as Record<RoleCaller, { withoutScope: Map<Scope, string>; otherTenant: string }>;

async function makeRestrictedKeys(): Promise<void> {
  for (const caller of roleCallers) {
    const user = userOf(caller)!;
    const withoutScope = new Map<Scope, string>();
    // One key with every grantable scope serves account:manage, which no restricted key holds.
    const everything = grantable(caller);
    for (const scope of SCOPES) {
      const scopes = everything.filter((held) => held !== scope);
      const { apiKey } = ok(await user.client.POST('/api-keys', { body: { name: `Without ${scope}`, scopes } }));
      withoutScope.set(scope, apiKey.secret);
    }
    const elsewhere = ok(await user.client.POST('/tenants', { body: { name: 'Elsewhere' } })).tenant;
    const { apiKey } = ok(
      await user.client.POST('/api-keys', { body: { name: 'Elsewhere only', tenants: [elsewhere.id] } }),
    );
    restrictedKeys[caller] = { withoutScope, otherTenant: apiKey.secret };
  }
}

describe('the permission matrix', () => {
  it('has exactly one row per operation of the spec, and one input for each', () => {
    const operationIds = spec.operations.map((operation) => operation.operationId).sort();
    expect(new Set(operationIds).size).toBe(operationIds.length);
    expect(Object.keys(expected).sort()).toEqual(operationIds);
    expect(Object.keys(inputs).sort()).toEqual(operationIds);
    for (const row of Object.values(expected)) expect(Object.keys(row).sort()).toEqual([...callers].sort());
  });

  it('has every operation of PRODUCT.md in the spec, and no other', () => {
    const work = '/tenants/{tenant_id}/works/{work_id}';
    const request = `${work}/requests/{id}`;
    const productOperations = [
      'POST /admin/users',
      // Where the creation's Location points: the new user, read with the operator token.
      'GET /admin/users/{user_id}',
      'GET /me',
      'GET /api-keys',
      'POST /api-keys',
      'DELETE /api-keys/{api_key_id}',
      // Sign-in for people (PRODUCT.md: sessions): the emailed link or code, the list, one ended, all ended.
      'POST /sessions/email',
      'POST /sessions',
      'GET /me/sessions',
      'DELETE /me/sessions/{session_id}',
      'DELETE /me/sessions',
      'GET /tenants',
      'POST /tenants',
      'GET /tenants/{tenant_id}',
      'PATCH /tenants/{tenant_id}',
      'GET /tenants/{tenant_id}/members',
      'POST /tenants/{tenant_id}/members',
      // One member with the ETag a role change checks (the console's role changes send If-Match).
      'GET /tenants/{tenant_id}/members/{user_id}',
      'PATCH /tenants/{tenant_id}/members/{user_id}',
      'DELETE /tenants/{tenant_id}/members/{user_id}',
      // Invitations: membership is by consent (PRODUCT.md: members).
      'GET /tenants/{tenant_id}/invitations',
      'DELETE /tenants/{tenant_id}/invitations/{invitation_id}',
      'GET /me/invitations',
      'POST /me/invitations/{invitation_id}/accept',
      'POST /me/invitations/{invitation_id}/decline',
      'GET /tenants/{tenant_id}/works',
      'POST /tenants/{tenant_id}/works',
      `GET ${work}`,
      `PATCH ${work}`,
      `DELETE ${work}`,
      `PUT ${work}/undiscard`,
      `GET ${work}/requests`,
      `POST ${work}/requests`,
      // Bulk send (PRODUCT.md: Operations).
      `POST ${work}/request-batches`,
      // Finding things and catching up: the tenant-wide request list and the events feed.
      'GET /tenants/{tenant_id}/requests',
      'GET /tenants/{tenant_id}/events',
      `GET ${request}`,
      `GET ${request}/events`,
      `DELETE ${request}/cancel`,
      `PUT ${request}/confirm`,
      `PUT ${request}/early_validate`,
      `PUT ${request}/validate`,
      // Recipients (PRODUCT.md: Recipients).
      `POST ${request}/resend`,
      'GET /recipient/request',
      'POST /recipient/request/answer',
      // Webhooks (PRODUCT.md: Webhooks).
      'GET /tenants/{tenant_id}/webhook-endpoints',
      'POST /tenants/{tenant_id}/webhook-endpoints',
      'GET /tenants/{tenant_id}/webhook-endpoints/{endpoint_id}',
      'PATCH /tenants/{tenant_id}/webhook-endpoints/{endpoint_id}',
      'DELETE /tenants/{tenant_id}/webhook-endpoints/{endpoint_id}',
      'POST /tenants/{tenant_id}/webhook-endpoints/{endpoint_id}/rotate-secret',
      'POST /tenants/{tenant_id}/webhook-endpoints/{endpoint_id}/test',
      'GET /tenants/{tenant_id}/webhook-endpoints/{endpoint_id}/deliveries',
      'POST /tenants/{tenant_id}/webhook-endpoints/{endpoint_id}/deliveries/{delivery_id}/retry',
    ];
    const specOperations = spec.operations.map((operation) => `${operation.method.toUpperCase()} ${operation.path}`);
    expect(specOperations.sort()).toEqual(productOperations.sort());
  });

  describe.each(spec.operations.map((operation) => [operation.operationId, operation] as const))(
    '%s',
    (operationId, operation) => {
      it.each(callers)(`as %s`, async (caller) => {
        const want = expected[operationId]?.[caller];
        if (want === undefined) throw new Error(`the matrix has no cell for ${operationId} × ${caller}`);
        const { params, body } = await inputs[operationId](caller);
        const authorization = authorizationOf(caller);
        const res = await server.call(urlOf(operation, params), {
          method: operation.method.toUpperCase(),
          headers: authorization ? { Authorization: authorization } : {},
          json: body,
        });
        const text = await res.text();
        expect({ caller, status: res.status, body: res.status === want ? undefined : text }).toEqual({
          caller,
          status: want,
          body: undefined,
        });
        if (want >= 400) {
          expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
          const code = JSON.parse(text).code;
          expect(code).toBe(
            operation.operationId === 'createSession'
              ? 'invalid_sign_in'
              : { 401: 'unauthenticated', 403: 'forbidden', 404: 'not_found' }[want],
          );
        }
        if (want === 401) expect(res.headers.get('www-authenticate')).toMatch(/^Bearer\b/);
        else expect(res.headers.get('www-authenticate')).toBeNull();
      });
    },
  );

  describe.each(spec.operations.map((operation) => [operation.operationId, operation] as const))(
    '%s with a restricted key',
    (operationId, operation) => {
      const cells = roleCallers.flatMap((caller) => keyKinds.map((kind) => [caller, kind] as const));
      it.each(cells)('as %s, %s', async (caller, kind) => {
        const want = expectedFor(operation, kind);
        const { params, body } = await inputs[operationId](caller);
        const scope = operation.requiredScope;
        const key =
          kind === 'otherTenant'
            ? restrictedKeys[caller].otherTenant
            : restrictedKeys[caller].withoutScope.get(scope ?? 'account:read')!;
        const res = await server.call(urlOf(operation, params), {
          method: operation.method.toUpperCase(),
          headers: { Authorization: `Bearer ${key}` },
          json: body,
        });
        const text = await res.text();
        expect({ caller, kind, status: res.status, body: res.status === want ? undefined : text }).toEqual({
          caller,
          kind,
          status: want,
          body: undefined,
        });
        if (want === 403) {
          // The missing scope, named in the body and in WWW-Authenticate (RFC 6750).
          expect(JSON.parse(text)).toMatchObject({ code: 'insufficient_scope', scope });
          expect(res.headers.get('www-authenticate')).toBe(`Bearer error="insufficient_scope", scope="${scope}"`);
        } else if (want >= 400) {
          expect(JSON.parse(text).code).toBe(
            operation.operationId === 'createSession'
              ? 'invalid_sign_in'
              : { 401: 'unauthenticated', 404: 'not_found' }[want],
          );
        }
      });
    },
  );

  it('names one scope for every operation an API key calls, and none for the others', () => {
    for (const operation of spec.operations) {
      const byKey = operation.security.includes('bearerAuth');
      expect({
        id: operation.operationId,
        scope: byKey ? SCOPES.includes(operation.requiredScope!) : operation.requiredScope,
      }).toEqual({
        id: operation.operationId,
        scope: byKey ? true : undefined,
      });
    }
    // Every scope is needed by some operation.
    expect(new Set(spec.operations.map((operation) => operation.requiredScope).filter(Boolean))).toEqual(
      new Set(SCOPES),
    );
  });
});
