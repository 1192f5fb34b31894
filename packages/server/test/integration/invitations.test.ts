import { createClient } from '@works-api/client';
import { createTenant, freshEmail } from '../support/fixtures';
import { inviteEmail, type RoleFixture, tenantWithRoles } from '../support/roles';
import { startSmtpSink, type SmtpSink } from '../support/smtp-sink';
import { smtpTransport } from '../../src/mail/transport';
import { ADMIN_TOKEN, startTestServer, type TestServer, type TestUser } from '../support/server';

/**
 * Members by email (issue 23, email squatting and disclosure): an email that no user has becomes a pending
 * invitation, with no user row and nothing outside the tenant; the operator's creation of that user completes it.
 */
let server: TestServer;
let roles: RoleFixture;
let sink: SmtpSink;
const CAP = 3;

beforeAll(async () => {
  sink = await startSmtpSink();
  // Invitation emails belong to no request, so this sender claims every email (no onlyTenants filter): on a shared
  // PostgreSQL the CI runs one file at a time, and the tests look for their own messages by address.
  server = await startTestServer({
    mail: { transport: smtpTransport(sink.url), pollIntervalMs: 100 },
    limits: { invitationsPerTenant: CAP },
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
    expect(body).toEqual({
      invitation: {
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        email: email.toLowerCase(),
        role: 'admin',
        firstName: 'Grace',
        lastName: 'Hopper',
        invitedBy: { firstName: 'admin', lastName: 'Tester', email: roles.admin.email },
        createdAt: expect.any(String),
      },
    });
    expect(await userRows(email)).toBe(0);
    // Not a member yet: the members list does not show the email.
    const members = await call(roles.owner, 'GET', `${membersUrl(roles.tenant.id)}?limit=100`);
    const listed = members.body.members.edges.map(
      (edge: { node: { user: { email: string } } }) => edge.node.user.email,
    );
    expect(listed).not.toContain(email.toLowerCase());

    // The operator's creation is not refused (it was: email_taken), and makes the membership with its event.
    const created = await server.call('/v1/admin/users', {
      method: 'POST',
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}` },
      json: { email, firstName: 'Grace B.', lastName: 'Hopper' },
    });
    expect(created.status).toBe(201);
    const { user } = await created.json();
    expect(user).toMatchObject({ email: email.toLowerCase(), firstName: 'Grace B.', lastName: 'Hopper' });
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

  it('joins every tenant that invited the email, and takes the oldest suggested names when the operator gives none', async () => {
    const email = freshEmail('invited');
    const a = await freshTenant('Inviting A');
    const b = await freshTenant('Inviting B');
    await inviteEmail(a.owner, a.tenant.id, email, 'member', { firstName: 'Ada', lastName: 'L.' });
    await inviteEmail(b.owner, b.tenant.id, email, 'owner', { firstName: 'Other' });
    const created = await createUserAsOperator(email.toUpperCase());
    expect(created.status).toBe(201);
    const { user, apiKey } = await created.json();
    expect(user).toMatchObject({ firstName: 'Ada', lastName: 'L.' });
    const tenants = await server.call('/v1/tenants', { apiKey: apiKey.secret });
    const names = (await tenants.json()).tenants.edges.map((edge: { node: { name: string } }) => edge.node.name);
    expect(names.sort()).toEqual(['Inviting A', 'Inviting B']);
    const roleIn = async (tenantId: string) =>
      (await call(a.owner, 'GET', `${membersUrl(tenantId)}/${user.id}`)).body?.member?.role;
    expect(await roleIn(a.tenant.id)).toBe('member');
    expect((await call(b.owner, 'GET', `${membersUrl(b.tenant.id)}/${user.id}`)).body.member.role).toBe('owner');
    // Now a user: adding the email elsewhere is a plain 201.
    const c = await freshTenant('After the fact');
    expect((await add(c.owner, c.tenant.id, { email, role: 'member' })).status).toBe(201);
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
    // Existing users are still added: the cap is on invitations only.
    const user = await server.createUser('capped-member');
    expect((await add(owner, tenant.id, { email: user.email, role: 'member' })).status).toBe(201);
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

  it('emails the invited address through the outbox: the tenant, who invited, that an operator creates the account; all escaped', async () => {
    const ownerEmail = freshEmail('mallory');
    const made = await createUserAsOperator(ownerEmail, { firstName: '<b>Mallory</b>', lastName: 'Tester' });
    const { apiKey } = await made.json();
    const owner = {
      email: ownerEmail,
      apiKey: apiKey.secret,
      client: createClient({ baseUrl: server.baseUrl, apiKey: apiKey.secret, retry: false }),
    } as TestUser;
    const tenant = await createTenant(owner, 'Acme <script>alert(1)</script> & "Co"');
    const email = freshEmail('mailed');
    await inviteEmail(owner, tenant.id, email, 'admin', { firstName: '<i>Eve</i>' });
    const mail = await eventuallyMailTo(email.toLowerCase());
    expect(mail.parsed.subject).toBe(`<b>Mallory</b> Tester invited you to Acme <script>alert(1)</script> & "Co"`);
    const text = mail.parsed.text ?? '';
    expect(text).toContain('Hello <i>Eve</i>,');
    expect(text).toContain(
      `<b>Mallory</b> Tester (${owner.email}) invited you to join "Acme <script>alert(1)</script> & "Co"" as an admin.`,
    );
    expect(text).toContain('An operator of the service creates it');
    const html = String(mail.parsed.html);
    expect(html).toContain('Acme &lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;Co&quot;');
    expect(html).toContain('&lt;b&gt;Mallory&lt;/b&gt;');
    expect(html).toContain('Hello &lt;i&gt;Eve&lt;/i&gt;,');
    expect(html).not.toMatch(/<script|<b>|<i>/);
    const row = await server.database.prisma.mailMessage.findFirst({ where: { to: email.toLowerCase() } });
    expect(row?.kind).toBe('invitation');
  });

  it('queues no email when the invitation is refused', async () => {
    const { owner, tenant } = await freshTenant('No mail');
    const email = freshEmail('invited');
    await inviteEmail(owner, tenant.id, email, 'member');
    expect((await add(owner, tenant.id, { email, role: 'member' })).status).toBe(409);
    expect(await server.database.prisma.mailMessage.count({ where: { to: email.toLowerCase() } })).toBe(1);
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

  it('deletes an invitation (204): the operator’s creation then joins nothing; members 403, strangers 404', async () => {
    const email = freshEmail('invited');
    const invitation = await inviteEmail(roles.owner, roles.tenant.id, email, 'member');
    const url = `${invitationsUrl(roles.tenant.id)}/${invitation.id}`;
    expect((await call(roles.member, 'DELETE', url)).status).toBe(403);
    expect((await call(roles.stranger, 'DELETE', url)).status).toBe(404);
    expect(await server.database.prisma.invitation.count({ where: { id: invitation.id } })).toBe(1);

    const deleted = await server.call(url, { method: 'DELETE', apiKey: roles.admin.apiKey });
    expect(deleted.status).toBe(204);
    expect(await deleted.text()).toBe('');
    expect((await call(roles.admin, 'DELETE', url)).status).toBe(404);

    const created = await createUserAsOperator(email);
    expect(created.status).toBe(201);
    const { user } = await created.json();
    expect(await server.database.prisma.membership.count({ where: { userId: user.id } })).toBe(0);
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

describe('what a tenant learns about a user it adds', () => {
  it('is only their id, names and email: not when their account was created, anywhere', async () => {
    const { owner, tenant } = await freshTenant('Curious');
    const stranger = await server.createUser('private');
    const added = await add(owner, tenant.id, { email: stranger.email, role: 'member' });
    expect(added.status).toBe(201);
    const expected = { id: stranger.id, firstName: 'private', lastName: 'Tester', email: stranger.email };
    expect(added.body.member.user).toEqual(expected);
    expect((await call(owner, 'GET', `${membersUrl(tenant.id)}/${stranger.id}`)).body.member.user).toEqual(expected);
    const list = await call(owner, 'GET', membersUrl(tenant.id));
    for (const edge of list.body.members.edges)
      expect(Object.keys(edge.node.user).sort()).toEqual(['email', 'firstName', 'id', 'lastName']);
    // The user still sees their own account's creation time.
    const me = await call(stranger, 'GET', '/v1/me');
    expect(me.body.user.createdAt).toEqual(expect.any(String));
  });
});

async function eventuallyMailTo(address: string) {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const found = sink.received.find((mail) => mail.to.includes(address));
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`no email to ${address}`);
    await sink.waitFor(sink.received.length + 1, Math.max(1, deadline - Date.now())).catch(() => undefined);
  }
}
