import { type components, createClient } from '@works-api/client';
import { createTenant, freshEmail } from '../support/fixtures';
import { eventually } from '../support/load';
import { inviteEmail, type RoleFixture, tenantWithRoles } from '../support/roles';
import { startSmtpSink, type SmtpSink } from '../support/smtp-sink';
import { smtpTransport } from '../../src/mail/transport';
import { ADMIN_TOKEN, startTestServer, type TestServer, type TestUser } from '../support/server';

/**
 * Invitations: adding an email to a tenant makes a pending invitation, with no user row and nothing outside the
 * tenant, whether or not an account has the email; the person joins only by accepting it with their own account
 * (the operator's creation of that account joins nothing), before it expires.
 */
let server: TestServer;
let roles: RoleFixture;
let sink: SmtpSink;
const CAP = 3;
const TTL_MS = 3 * 86_400_000;
type Invitation = components['schemas']['Invitation'];

beforeAll(async () => {
  sink = await startSmtpSink();
  // Invitation emails belong to no request, so this sender claims every email (no onlyTenants filter): on a shared
  // PostgreSQL the CI runs one file at a time, and the tests look for their own messages by address.
  server = await startTestServer({
    mail: { transport: smtpTransport(sink.url), pollIntervalMs: 100 },
    limits: { invitationsPerTenant: CAP, invitationTtlMs: TTL_MS },
  });
  roles = await tenantWithRoles(server, 'Invitations Inc');
});
afterAll(async () => {
  await server.close();
  await sink.close();
});

async function call(user: TestUser, method: string, url: string, json?: unknown) {
  const res = await server.call(url, { method, apiKey: user.apiKey, json });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
}

const membersUrl = (tenantId: string) => `/v1/tenants/${tenantId}/members`;
const invitationsUrl = (tenantId: string) => `/v1/tenants/${tenantId}/invitations`;
const add = (by: TestUser, tenantId: string, json: object) => call(by, 'POST', membersUrl(tenantId), json);

const userRows = (email: string) => server.database.prisma.user.count({ where: { email: email.toLowerCase() } });

async function createUserAsOperator(email: string, names = { firstName: '', lastName: '' }) {
  const res = await server.call('/v1/admin/users', {
    method: 'POST',
    headers: { Authorization: `Bearer ${ADMIN_TOKEN}` },
    json: { email, ...names },
  });
  return res;
}

/** A tenant of its own (the cap is per tenant), owned by a new user. */
async function freshTenant(name: string) {
  const owner = await server.createUser('inviter');
  return { owner, tenant: await createTenant(owner, name) };
}

const accept = (by: TestUser, invitationId: string) =>
  server.callAs(by, 'POST', `/v1/me/invitations/${invitationId}/accept`);
const mine = async (by: TestUser) => (await server.callAs(by, 'GET', '/v1/me/invitations')).body.invitations;

/** A user the operator creates, with their client. */
async function operatorUser(email: string, names = { firstName: '', lastName: '' }): Promise<TestUser> {
  const res = await createUserAsOperator(email, names);
  expect(res.status).toBe(201);
  const { user, apiKey } = await res.json();
  return {
    id: user.id,
    email: user.email,
    apiKey: apiKey.secret,
    client: createClient({ baseUrl: server.baseUrl, apiKey: apiKey.secret, retry: false }),
  };
}

describe('POST /tenants/{id}/members with an email that has no user', () => {
  it('creates no user: 202 with a pending invitation, and the operator may still create that user', async () => {
    const email = freshEmail('Grace');
    const { status, body, headers } = await add(roles.admin, roles.tenant.id, {
      email,
      role: 'admin',
      firstName: ' Grace ',
      lastName: 'Hopper',
    });
    expect(status).toBe(202);
    expect(headers.get('location')).toBeNull();
    const createdAt = Date.parse(body.invitation.createdAt);
    expect(body).toEqual({
      invitation: {
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        email: email.toLowerCase(),
        role: 'admin',
        firstName: 'Grace',
        lastName: 'Hopper',
        invitedBy: { firstName: 'admin', lastName: 'Tester', email: roles.admin.email },
        tenant: { id: roles.tenant.id, name: 'Invitations Inc' },
        createdAt: expect.any(String),
        expiresAt: new Date(createdAt + TTL_MS).toISOString(),
      },
    });
    expect(await userRows(email)).toBe(0);
    // Not a member yet: the members list does not show the email.
    const members = await call(roles.owner, 'GET', `${membersUrl(roles.tenant.id)}?limit=100`);
    const listed = members.body.members.edges.map(
      (edge: { node: { user: { email: string } } }) => edge.node.user.email,
    );
    expect(listed).not.toContain(email.toLowerCase());

    // The operator's creation is not refused, and joins nothing: the invitation waits for the person.
    const user = await operatorUser(email, { firstName: 'Grace B.', lastName: 'Hopper' });
    expect(
      await server.database.prisma.membership.count({ where: { tenantId: roles.tenant.id, userId: user.id } }),
    ).toBe(0);
    expect((await mine(user)).edges.map((edge) => edge.node)).toEqual([body.invitation]);
    expect((await accept(user, body.invitation.id)).status).toBe(200);
    const membership = await server.database.prisma.membership.findUnique({
      where: { tenantId_userId: { tenantId: roles.tenant.id, userId: user.id } },
    });
    expect(membership?.role).toBe('admin');
    expect(await server.database.prisma.invitation.count({ where: { email: email.toLowerCase() } })).toBe(0);
    const events = await server.database.prisma.webhookEvent.findMany({
      where: { tenantId: roles.tenant.id, type: 'member.added' },
    });
    const event = events.map((row) => JSON.parse(row.body)).find((e) => e.data.member.user.id === user.id);
    expect(event).toMatchObject({
      type: 'member.added',
      tenantId: roles.tenant.id,
      data: { member: { role: 'admin', user: { id: user.id, email: email.toLowerCase(), firstName: 'Grace B.' } } },
    });
    expect(event.data.member.user).not.toHaveProperty('createdAt');
  });

  it("never gives a user an inviter's names: the operator's empty names stay empty, and nothing is joined", async () => {
    const email = freshEmail('invited');
    const a = await freshTenant('Inviting A');
    const b = await freshTenant('Inviting B');
    await inviteEmail(a.owner, a.tenant.id, email, 'member', { firstName: 'Ada', lastName: 'L.' });
    await inviteEmail(b.owner, b.tenant.id, email, 'owner', { firstName: 'Other' });
    const user = await operatorUser(email.toUpperCase());
    expect((await call(user, 'GET', '/v1/me')).body.user).toMatchObject({ firstName: '', lastName: '' });
    expect((await call(user, 'GET', '/v1/tenants')).body.tenants.totalCount).toBe(0);
    // Both wait for them, newest first; accepting one leaves the other.
    const pending = await mine(user);
    expect(pending.edges.map((edge) => edge.node.tenant.name)).toEqual(['Inviting B', 'Inviting A']);
    expect((await accept(user, pending.edges[1]!.node.id)).status).toBe(200);
    const names = (await call(user, 'GET', '/v1/tenants')).body.tenants.edges.map(
      (edge: { node: { name: string; members: { nodes: unknown[] } } }) => edge.node.name,
    );
    expect(names).toEqual(['Inviting A']);
    expect((await call(user, 'GET', '/v1/me')).body.user).toMatchObject({ firstName: '', lastName: '' });
    expect((await mine(user)).totalCount).toBe(1);
  });

  it('answers 409 already_invited for the same email again (any case), and nothing changes', async () => {
    const { owner, tenant } = await freshTenant('Twice');
    const email = freshEmail('invited');
    await inviteEmail(owner, tenant.id, email, 'member');
    const again = await add(owner, tenant.id, { email: email.toUpperCase(), role: 'admin' });
    expect([again.status, again.body.code]).toEqual([409, 'already_invited']);
    const { body } = await call(owner, 'GET', invitationsUrl(tenant.id));
    expect(body.invitations.totalCount).toBe(1);
    expect(body.invitations.edges[0].node.role).toBe('member');
  });

  it(`refuses the invitation over MAX_INVITATIONS_PER_TENANT (${CAP} here) with 409 invitation_limit_reached, until one is deleted`, async () => {
    const { owner, tenant } = await freshTenant('Capped');
    const invited = [];
    for (let i = 0; i < CAP; i++) invited.push(await inviteEmail(owner, tenant.id, freshEmail('invited'), 'member'));
    const over = await add(owner, tenant.id, { email: freshEmail('invited'), role: 'member' });
    expect([over.status, over.body.code]).toEqual([409, 'invitation_limit_reached']);
    expect(over.body.detail).toContain(`${CAP} pending invitations`);
    // An existing account's email is an invitation like any other: capped too.
    const user = await server.createUser('capped-member');
    expect((await add(owner, tenant.id, { email: user.email, role: 'member' })).body.code).toBe(
      'invitation_limit_reached',
    );
    expect((await call(owner, 'DELETE', `${invitationsUrl(tenant.id)}/${invited[0]!.id}`)).status).toBe(204);
    expect((await add(owner, tenant.id, { email: freshEmail('invited'), role: 'member' })).status).toBe(202);
  });

  it('lets only an owner invite an owner, and refuses members (403) and strangers (404), inviting nobody', async () => {
    const email = freshEmail('invited');
    const byAdmin = await add(roles.admin, roles.tenant.id, { email, role: 'owner' });
    expect([byAdmin.status, byAdmin.body.code]).toEqual([403, 'forbidden']);
    expect((await add(roles.member, roles.tenant.id, { email, role: 'member' })).status).toBe(403);
    const byStranger = await add(roles.stranger, roles.tenant.id, { email, role: 'member' });
    expect([byStranger.status, byStranger.body.detail]).toEqual([404, 'No tenant with this id.']);
    expect(await server.database.prisma.invitation.count({ where: { email: email.toLowerCase() } })).toBe(0);
    expect((await add(roles.owner, roles.tenant.id, { email, role: 'owner' })).status).toBe(202);
  });

  it('emails the invited address through the outbox: the tenant, who invited, the console link; all escaped', async () => {
    const ownerEmail = freshEmail('mallory');
    const owner = await operatorUser(ownerEmail, { firstName: '<b>Mallory</b>', lastName: 'Tester' });
    const tenant = await createTenant(owner, 'Acme <script>alert(1)</script> & "Co"');
    const email = freshEmail('mailed');
    await inviteEmail(owner, tenant.id, email, 'admin', { firstName: '<i>Eve</i>' });
    const mail = await eventuallyMailTo(email.toLowerCase());
    const text = mail.parsed.text ?? '';
    expect(text).toContain('Hello <i>Eve</i>,');
    expect(text).toContain(
      `<b>Mallory</b> Tester (${owner.email}) invited you to join "Acme <script>alert(1)</script> & "Co"" as an admin.`,
    );
    expect(text).toContain('http://works.test/console/invitations');
    const html = String(mail.parsed.html);
    expect(html).toContain('Acme &lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;Co&quot;');
    expect(html).toContain('&lt;b&gt;Mallory&lt;/b&gt;');
    expect(html).toContain('Hello &lt;i&gt;Eve&lt;/i&gt;,');
    expect(html).not.toMatch(/<script|<b>|<i>/);
    const row = await server.database.prisma.mailMessage.findFirst({
      where: { kind: 'invitation', tenantId: tenant.id },
    });
    expect(row?.kind).toBe('invitation');
  });

  it('sends the same email whether or not an account has the address', async () => {
    const { owner, tenant } = await freshTenant('Same mail');
    const user = await server.createUser('has-account');
    const nobody = freshEmail('no-account');
    await inviteEmail(owner, tenant.id, user.email, 'member', { firstName: 'Sam' });
    await inviteEmail(owner, tenant.id, nobody, 'member', { firstName: 'Sam' });
    const [known, unknown] = await Promise.all([
      eventuallyMailTo(user.email.toLowerCase()),
      eventuallyMailTo(nobody.toLowerCase()),
    ]);
    expect(known.parsed.subject).toBe(unknown.parsed.subject);
    // The same but for the stop link, which is the address's own, and the expiry, whose minute the two
    // invitations may straddle.
    const comparable = (text = '') =>
      text
        .replace(/\/stop\/[A-Za-z0-9_-]{43}/, '/stop/…')
        .replace(/until [^.]*? UTC/, 'until …')
        .replace(/\?email=\S+/, '?email=…');
    expect(comparable(known.parsed.text)).toBe(comparable(unknown.parsed.text));
  });

  it('queues no email when the invitation is refused', async () => {
    const { owner, tenant } = await freshTenant('No mail');
    const email = freshEmail('invited');
    await inviteEmail(owner, tenant.id, email, 'member');
    expect((await add(owner, tenant.id, { email, role: 'member' })).status).toBe(409);
    expect(await server.database.prisma.mailMessage.count({ where: { tenantId: tenant.id } })).toBe(1);
  });
});

describe('GET and DELETE /tenants/{id}/invitations', () => {
  it('lists pending invitations newest first, paged like every list, to owners and admins only', async () => {
    const { owner, tenant } = await freshTenant('Listed');
    const first = await inviteEmail(owner, tenant.id, freshEmail('invited'), 'member');
    const second = await inviteEmail(owner, tenant.id, freshEmail('invited'), 'admin');
    const page1 = await call(owner, 'GET', `${invitationsUrl(tenant.id)}?limit=1`);
    expect(page1.status).toBe(200);
    expect(page1.body.invitations).toMatchObject({
      totalCount: 2,
      edges: [{ node: second }],
      pageInfo: { hasNextPage: true },
    });
    const after = encodeURIComponent(page1.body.invitations.pageInfo.endCursor);
    const page2 = await call(owner, 'GET', `${invitationsUrl(tenant.id)}?limit=1&after=${after}`);
    expect(page2.body.invitations).toMatchObject({
      totalCount: 2,
      edges: [{ node: first }],
      pageInfo: { hasNextPage: false },
    });

    expect((await call(roles.admin, 'GET', invitationsUrl(roles.tenant.id))).status).toBe(200);
    const byMember = await call(roles.member, 'GET', invitationsUrl(roles.tenant.id));
    expect([byMember.status, byMember.body.code]).toEqual([403, 'forbidden']);
    const byStranger = await call(roles.stranger, 'GET', invitationsUrl(tenant.id));
    expect([byStranger.status, byStranger.body.detail]).toEqual([404, 'No tenant with this id.']);
  });

  it('deletes an invitation (204): the person can no longer accept it; members 403, strangers 404', async () => {
    const invited = await server.createUser('invited');
    const invitation = await inviteEmail(roles.owner, roles.tenant.id, invited.email, 'member');
    const url = `${invitationsUrl(roles.tenant.id)}/${invitation.id}`;
    expect((await call(roles.member, 'DELETE', url)).status).toBe(403);
    expect((await call(roles.stranger, 'DELETE', url)).status).toBe(404);
    expect(await server.database.prisma.invitation.count({ where: { id: invitation.id } })).toBe(1);

    const deleted = await server.call(url, { method: 'DELETE', apiKey: roles.admin.apiKey });
    expect(deleted.status).toBe(204);
    expect(await deleted.text()).toBe('');
    expect((await call(roles.admin, 'DELETE', url)).status).toBe(404);

    expect((await mine(invited)).totalCount).toBe(0);
    expect((await accept(invited, invitation.id)).status).toBe(404);
    expect(await server.database.prisma.membership.count({ where: { userId: invited.id } })).toBe(0);
  });

  it('lets only an owner withdraw an invitation to the owner role', async () => {
    const invitation = await inviteEmail(roles.owner, roles.tenant.id, freshEmail('invited'), 'owner');
    const url = `${invitationsUrl(roles.tenant.id)}/${invitation.id}`;
    const byAdmin = await call(roles.admin, 'DELETE', url);
    expect([byAdmin.status, byAdmin.body.code]).toEqual([403, 'forbidden']);
    expect((await call(roles.owner, 'DELETE', url)).status).toBe(204);
  });

  it('answers 404 for an invitation of another tenant, and deletes nothing', async () => {
    const { owner, tenant } = await freshTenant('Foreign');
    const theirs = await inviteEmail(owner, tenant.id, freshEmail('invited'), 'member');
    const res = await call(roles.owner, 'DELETE', `${invitationsUrl(roles.tenant.id)}/${theirs.id}`);
    expect([res.status, res.body.detail]).toEqual([404, 'No invitation with this id.']);
    expect(await server.database.prisma.invitation.count({ where: { id: theirs.id } })).toBe(1);
  });
});

describe('GET /me/invitations, and answering one', () => {
  it('lists only the caller’s own pending invitations, paged newest first', async () => {
    const user = await server.createUser('listed');
    const tenants = [await freshTenant('Mine 1'), await freshTenant('Mine 2'), await freshTenant('Mine 3')];
    for (const { owner, tenant } of tenants) await inviteEmail(owner, tenant.id, user.email, 'member');
    // Someone else's invitation, in the same tenant, is not listed.
    await inviteEmail(tenants[0]!.owner, tenants[0]!.tenant.id, freshEmail('other'), 'member');
    const first = await call(user, 'GET', '/v1/me/invitations?limit=2');
    expect(first.body.invitations.totalCount).toBe(3);
    expect(first.body.invitations.edges.map((edge: { node: Invitation }) => edge.node.tenant.name)).toEqual([
      'Mine 3',
      'Mine 2',
    ]);
    const after = encodeURIComponent(first.body.invitations.pageInfo.endCursor);
    const second = await call(user, 'GET', `/v1/me/invitations?limit=2&after=${after}`);
    expect(second.body.invitations.edges.map((edge: { node: Invitation }) => edge.node.tenant.name)).toEqual([
      'Mine 1',
    ]);
    expect(second.body.invitations.pageInfo.hasNextPage).toBe(false);
  });

  it('declines: the invitation is gone (204), no member, and the tenant may invite again', async () => {
    const user = await server.createUser('declining');
    const { owner, tenant } = await freshTenant('Declined');
    const invitation = await inviteEmail(owner, tenant.id, user.email, 'admin');
    const stranger = await server.createUser('not-invited');
    expect((await call(stranger, 'POST', `/v1/me/invitations/${invitation.id}/decline`)).status).toBe(404);
    const declined = await server.call(`/v1/me/invitations/${invitation.id}/decline`, {
      method: 'POST',
      apiKey: user.apiKey,
    });
    expect(declined.status).toBe(204);
    expect(await declined.text()).toBe('');
    expect((await call(user, 'POST', `/v1/me/invitations/${invitation.id}/decline`)).status).toBe(404);
    expect((await accept(user, invitation.id)).status).toBe(404);
    expect(await server.database.prisma.membership.count({ where: { userId: user.id } })).toBe(0);
    expect((await add(owner, tenant.id, { email: user.email, role: 'member' })).status).toBe(202);
  });

  it(`expires INVITATION_TTL after it was sent: not listed, not accepted, and the email may be invited again`, async () => {
    const user = await server.createUser('late');
    const { owner, tenant } = await freshTenant('Expiring');
    const invitation = await inviteEmail(owner, tenant.id, user.email, 'member');
    expect(Date.parse(invitation.expiresAt) - Date.parse(invitation.createdAt)).toBe(TTL_MS);
    // Time passes: the invitation's expiry is now behind us.
    await server.database.prisma.invitation.update({
      where: { id: invitation.id },
      data: { expiresAt: new Date(Date.now() - 1000) },
    });
    expect((await mine(user)).totalCount).toBe(0);
    const late = await accept(user, invitation.id);
    expect([late.status, late.body.code]).toEqual([404, 'not_found']);
    expect(late.body.detail).toContain('expired');
    expect(await server.database.prisma.membership.count({ where: { userId: user.id } })).toBe(0);
    // The tenant's list still shows it (expired), until the email is invited again, which replaces it.
    const listed = await call(owner, 'GET', invitationsUrl(tenant.id));
    expect(listed.body.invitations.edges.map((edge: { node: Invitation }) => edge.node.id)).toEqual([invitation.id]);
    const again = await add(owner, tenant.id, { email: user.email, role: 'admin' });
    expect(again.status).toBe(202);
    expect((await call(owner, 'GET', invitationsUrl(tenant.id))).body.invitations.totalCount).toBe(1);
    expect((await accept(user, again.body.invitation.id)).status).toBe(200);
  });

  it('does not count expired invitations against MAX_INVITATIONS_PER_TENANT', async () => {
    const { owner, tenant } = await freshTenant('Expired cap');
    for (let i = 0; i < CAP; i++) await inviteEmail(owner, tenant.id, freshEmail('invited'), 'member');
    expect((await add(owner, tenant.id, { email: freshEmail('over'), role: 'member' })).status).toBe(409);
    await server.database.prisma.invitation.updateMany({
      where: { tenantId: tenant.id },
      data: { expiresAt: new Date(Date.now() - 1000) },
    });
    expect((await add(owner, tenant.id, { email: freshEmail('room'), role: 'member' })).status).toBe(202);
  });
});

describe('what a tenant learns about a user it adds', () => {
  it('is only their id, names and email: not when their account was created, anywhere', async () => {
    const { owner, tenant } = await freshTenant('Curious');
    const stranger = await server.createUser('private');
    const invited = await add(owner, tenant.id, { email: stranger.email, role: 'member' });
    expect(invited.status).toBe(202);
    expect((await accept(stranger, invited.body.invitation.id)).status).toBe(200);
    const expected = { id: stranger.id, firstName: 'private', lastName: 'Tester', email: stranger.email };
    expect((await call(owner, 'GET', `${membersUrl(tenant.id)}/${stranger.id}`)).body.member.user).toEqual(expected);
    const list = await call(owner, 'GET', membersUrl(tenant.id));
    for (const edge of list.body.members.edges)
      expect(Object.keys(edge.node.user).sort()).toEqual(['email', 'firstName', 'id', 'lastName']);
    // The user still sees their own account's creation time.
    const me = await call(stranger, 'GET', '/v1/me');
    expect(me.body.user.createdAt).toEqual(expect.any(String));
  });
});

function eventuallyMailTo(address: string) {
  return eventually(
    () => {
      const found = sink.received.find((mail) => mail.to.includes(address));
      if (!found) throw new Error(`no email to ${address}`);
      return found;
    },
    { timeoutMs: 20_000, pauseMs: 10 },
  );
}
