import { type components, type Problem, unwrap, type WorksApiClient } from '@works-api/client';
import { freshEmail } from '../support/fixtures';
import { eventually } from '../support/load';
import { ADMIN_TOKEN, startTestServer, type TestServer } from '../support/server';
import { ContractRecorder, contractClient, previousOperationIds, specOperationIds } from './support/contract';
import { silentLogger } from '../../src/observability/logger';
import { DevMailbox } from '../../src/mail/transport';
import { daysFromNow } from '../support/clock';

/**
 * Contract tests: every operation of openapi/api.yaml, driven only through @works-api/client against the real
 * server (response validation on, on both sides), at least one success each, plus the documented errors partners
 * switch on. The last test fails when an operation of the spec was not exercised: a new operation needs a test.
 *
 * Tests run in order and build on each other (a tenant, then its works, then requests), as a partner would.
 */
type Schemas = components['schemas'];

let server: TestServer;
const recorder = new ContractRecorder();
let admin: WorksApiClient;
let ada: WorksApiClient; // owner of the tenant
let grace: WorksApiClient; // becomes a member, then admin
let graceId: string;
let stranger: WorksApiClient;

let tenant: Schemas['Tenant'];
let work: Schemas['Work'];
let request: Schemas['Request'];

// Emails go to a dev mailbox, sent by the app's own mail sender: the answer links come from there.
const mailbox = new DevMailbox(silentLogger());
const mailTenants: string[] = [];
const mailAddresses: string[] = [];

beforeAll(async () => {
  server = await startTestServer({
    mail: { transport: mailbox, onlyTenants: () => mailTenants, onlyAddresses: () => mailAddresses },
    devMailbox: mailbox,
  });
  admin = contractClient(server.baseUrl, ADMIN_TOKEN, recorder);
  const [adaUser, strangerUser] = await Promise.all([server.createUser('ada'), server.createUser('stranger')]);
  ada = contractClient(server.baseUrl, adaUser.apiKey, recorder);
  stranger = contractClient(server.baseUrl, strangerUser.apiKey, recorder);
});
afterAll(() => server.close());

const tenantPath = () => ({ tenant_id: tenant.id });
const workPath = () => ({ tenant_id: tenant.id, work_id: work.id });
const requestPath = (id = request.id) => ({ tenant_id: tenant.id, work_id: work.id, id });

/** The problem of a failed call, typed; fails the test if the call succeeded. */
function problemOf(result: { error?: Problem; response: Response }): Problem {
  if (result.error === undefined) throw new Error(`expected a problem, got ${result.response.status}`);
  return result.error;
}

describe('Admin', () => {
  it('adminCreateUser: creates a user with a first API key whose secret works', async () => {
    const email = freshEmail('grace');
    const result = await admin.adminCreateUser({ body: { email, firstName: 'Grace', lastName: 'Hopper' } });
    const { user, apiKey } = unwrap(result);
    expect(result.response.status).toBe(201);
    expect(result.response.headers.get('Location')).toBe(`/v1/admin/users/${user.id}`);
    expect(user).toMatchObject({ email, firstName: 'Grace', lastName: 'Hopper' });
    expect(apiKey.secret).toMatch(/^wk_/);
    graceId = user.id;
    grace = contractClient(server.baseUrl, apiKey.secret, recorder);
  });

  it('adminGetUser: the Location of the creation reads the user, with the operator token', async () => {
    const { user } = unwrap(await admin.adminGetUser({ params: { path: { user_id: graceId } } }));
    expect(user.id).toBe(graceId);
    const viaLocation = await fetch(`${server.baseUrl}/v1/admin/users/${graceId}`, {
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(((await viaLocation.json()) as { user: { id: string } }).user.id).toBe(graceId);
    const missing = await admin.adminGetUser({ params: { path: { user_id: '0193a1b2-7c3d-7e4f-8a9b-0c1d2e3f4a5b' } } });
    expect(problemOf(missing)).toMatchObject({ status: 404, code: 'not_found' });
  });

  it('adminCreateUser: an API key is not the operator token (401)', async () => {
    const result = await ada.adminCreateUser({ body: { email: freshEmail('x'), firstName: 'X', lastName: 'Y' } });
    expect(problemOf(result)).toMatchObject({ status: 401, code: 'unauthenticated' });
  });
});

describe('Account', () => {
  it('getMe: the caller', async () => {
    const { user } = unwrap(await grace.getMe());
    expect(user.id).toBe(graceId);
  });

  it('getMe: a wrong key is 401 with WWW-Authenticate', async () => {
    const result = await contractClient(server.baseUrl, 'wk_not_a_key', recorder).getMe();
    expect(problemOf(result)).toMatchObject({ status: 401, code: 'unauthenticated' });
    expect(result.response.headers.get('WWW-Authenticate')).toMatch(/^Bearer/);
  });

  let secondKeyId: string;
  it('createApiKey: shows the secret once', async () => {
    const result = await grace.createApiKey({ body: { name: 'CI key' } });
    const { apiKey } = unwrap(result);
    expect(result.response.status).toBe(201);
    expect(apiKey).toMatchObject({ name: 'CI key', revokedAt: null, lastUsedAt: null });
    expect(apiKey.secret.startsWith(apiKey.prefix)).toBe(true);
    secondKeyId = apiKey.id;
  });

  it('listApiKeys: the caller’s keys, newest first, never their secrets', async () => {
    const { apiKeys } = unwrap(await grace.listApiKeys({ params: { query: { limit: 10 } } }));
    expect(apiKeys.totalCount).toBe(2);
    expect(apiKeys.edges[0]!.node.id).toBe(secondKeyId);
    expect(apiKeys.edges.every((edge) => !('secret' in edge.node))).toBe(true);
  });

  it('revokeApiKey: revokes, and repeating it returns the key unchanged', async () => {
    const first = unwrap(await grace.revokeApiKey({ params: { path: { api_key_id: secondKeyId } } }));
    expect(first.apiKey.revokedAt).not.toBeNull();
    const again = unwrap(await grace.revokeApiKey({ params: { path: { api_key_id: secondKeyId } } }));
    expect(again.apiKey).toEqual(first.apiKey);
  });

  it('revokeApiKey: someone else’s key is 404', async () => {
    const result = await stranger.revokeApiKey({ params: { path: { api_key_id: secondKeyId } } });
    expect(problemOf(result)).toMatchObject({ status: 404, code: 'not_found' });
  });
});

describe('Sessions', () => {
  const email = freshEmail('person');
  const anonymous = () => contractClient(server.baseUrl, undefined, recorder);
  /** A client sending the session cookie as the console does (same origin), no Authorization. */
  const withCookie = (cookie: string) =>
    contractClient(server.baseUrl, undefined, recorder, { cookie, 'sec-fetch-site': 'same-origin' });

  /** Asks for a sign-in email to `email` and returns its link's token, once the sender has sent it. */
  async function emailedToken(): Promise<string> {
    const before = mailbox.messages().filter((message) => message.to === email).length;
    const result = await anonymous().createSignIn({ body: { email } });
    expect(result.response.status).toBe(202);
    expect(unwrap(result).signIn).toEqual({ email, validForSeconds: 900 });
    const mails = await eventually(() => {
      const found = mailbox.messages().filter((message) => message.to === email);
      expect(found.length).toBeGreaterThan(before);
      return found;
    });
    return /#token=([A-Za-z0-9_-]{43})/.exec(mails[0]!.text)![1]!;
  }

  async function signIn(): Promise<string> {
    const result = await anonymous().createSession({ body: { token: await emailedToken() } });
    const { session, user } = unwrap(result);
    expect(result.response.status).toBe(201);
    expect(result.response.headers.get('Location')).toBe(`/v1/me/sessions/${session.id}`);
    expect(user.email).toBe(email);
    return result.response.headers.getSetCookie()[0]!.split(';')[0]!;
  }

  let first: string;
  it('createSignIn / createSession: the emailed link for a session cookie; a link not ours is 400', async () => {
    mailAddresses.push(email);
    unwrap(await admin.adminCreateUser({ body: { email, firstName: 'Per', lastName: 'Son' } }));
    first = await signIn();
    const forged = await anonymous().createSession({ body: { token: 'A'.repeat(43) } });
    expect(problemOf(forged)).toMatchObject({ status: 400, code: 'invalid_sign_in' });
  });

  it('listSessions / revokeSession: the cookie lists its sessions, the current one marked; another one ends', async () => {
    const second = await signIn();
    const { sessions } = unwrap(await withCookie(second).listSessions());
    expect(sessions.totalCount).toBe(2);
    const other = sessions.edges.find((edge) => !edge.node.current)!.node;
    const ended = await withCookie(second).revokeSession({ params: { path: { session_id: other.id } } });
    expect(ended.response.status).toBe(204);
    expect(problemOf(await withCookie(first).getMe())).toMatchObject({ status: 401, code: 'unauthenticated' });
    first = second;
  });

  it('revokeAllSessions: signs out everywhere; the cookie is cleared', async () => {
    const result = await withCookie(first).revokeAllSessions();
    expect(result.response.status).toBe(204);
    expect(result.response.headers.getSetCookie()[0]).toMatch(/Max-Age=0/);
    expect(problemOf(await withCookie(first).getMe())).toMatchObject({ status: 401, code: 'unauthenticated' });
  });
});

describe('Tenants', () => {
  it('createTenant: the caller owns it; 201 with Location', async () => {
    const result = await ada.createTenant({ body: { name: 'Acme Research' } });
    tenant = unwrap(result).tenant;
    expect(result.response.status).toBe(201);
    expect(result.response.headers.get('Location')).toBe(`/v1/tenants/${tenant.id}`);
    expect(tenant.members.nodes).toEqual([{ role: 'owner', user: expect.objectContaining({ firstName: 'ada' }) }]);
    expect(tenant.works).toEqual({ totalCount: 0, edges: [], pageInfo: { hasNextPage: false, endCursor: null } });
  });

  it('createTenant: a body that breaks the contract is 400 with errors', async () => {
    const problem = problemOf(await ada.createTenant({ body: { name: '' } }));
    expect(problem).toMatchObject({ status: 400, code: 'validation_failed' });
    expect(problem.errors?.[0]?.path).toMatch(/name/);
  });

  it('getTenant: members see it', async () => {
    expect(unwrap(await ada.getTenant({ params: { path: tenantPath() } })).tenant.id).toBe(tenant.id);
  });

  it('getTenant: to a non-member it does not exist (404)', async () => {
    const problem = problemOf(await stranger.getTenant({ params: { path: tenantPath() } }));
    expect(problem).toMatchObject({ status: 404, code: 'not_found' });
  });

  it('listTenants: the caller’s tenants', async () => {
    const { tenants } = unwrap(await ada.listTenants());
    expect(tenants.edges.map((edge) => edge.node.id)).toContain(tenant.id);
    expect(unwrap(await stranger.listTenants()).tenants.totalCount).toBe(0);
  });

  it('updateTenant: renames, the slug stays', async () => {
    const { tenant: renamed } = unwrap(
      await ada.updateTenant({ params: { path: tenantPath() }, body: { name: 'Acme Research Lab' } }),
    );
    expect(renamed).toMatchObject({ name: 'Acme Research Lab', slug: tenant.slug });
    tenant = renamed;
  });
});

describe('Members', () => {
  it('addMember: invites an existing user by email (202); they find it in listMyInvitations and accept it', async () => {
    const { user } = unwrap(await grace.getMe());
    const result = await ada.addMember({ params: { path: tenantPath() }, body: { email: user.email, role: 'member' } });
    expect(result.response.status).toBe(202);
    const { invitation } = unwrap(result);
    expect(invitation).toMatchObject({
      email: user.email,
      role: 'member',
      tenant: { id: tenant.id, name: tenant.name },
    });
    const { invitations } = unwrap(await grace.listMyInvitations());
    expect(invitations.edges.map((edge) => edge.node)).toEqual([invitation]);
    expect(
      problemOf(await stranger.acceptInvitation({ params: { path: { invitation_id: invitation.id } } })),
    ).toMatchObject({ status: 404, code: 'not_found' });
    const accepted = unwrap(await grace.acceptInvitation({ params: { path: { invitation_id: invitation.id } } }));
    expect(accepted.tenant.members.nodes).toContainEqual({
      role: 'member',
      user: { firstName: 'Grace', lastName: 'Hopper', email: user.email },
    });
    expect(unwrap(await grace.listMyInvitations()).invitations.totalCount).toBe(0);
  });

  it('addMember: an email with no user is invited (202), listed by listInvitations, withdrawn by deleteInvitation', async () => {
    const email = freshEmail('invited');
    const result = await ada.addMember({ params: { path: tenantPath() }, body: { email, role: 'member' } });
    expect(result.response.status).toBe(202);
    const added = unwrap(result);
    expect(added.invitation).toMatchObject({ email, role: 'member', invitedBy: { firstName: 'ada' } });
    const again = problemOf(await ada.addMember({ params: { path: tenantPath() }, body: { email, role: 'member' } }));
    expect(again).toMatchObject({ status: 409, code: 'already_invited' });

    const { invitations } = unwrap(await ada.listInvitations({ params: { path: tenantPath() } }));
    expect(invitations.edges.map((edge) => edge.node)).toEqual([added.invitation]);
    const byMember = problemOf(await grace.listInvitations({ params: { path: tenantPath() } }));
    expect(byMember).toMatchObject({ status: 403, code: 'forbidden' });

    const path = { ...tenantPath(), invitation_id: added.invitation.id };
    expect((await ada.deleteInvitation({ params: { path } })).response.status).toBe(204);
    expect(problemOf(await ada.deleteInvitation({ params: { path } }))).toMatchObject({
      status: 404,
      code: 'not_found',
    });
  });

  it('addMember: the same user again is 409', async () => {
    const { user } = unwrap(await grace.getMe());
    const problem = problemOf(
      await ada.addMember({ params: { path: tenantPath() }, body: { email: user.email, role: 'admin' } }),
    );
    expect(problem).toMatchObject({ status: 409, code: 'already_member' });
  });

  it('listMembers: everyone, the owner included', async () => {
    const { members } = unwrap(await grace.listMembers({ params: { path: tenantPath() } }));
    expect(members.totalCount).toBe(2);
    expect(members.edges.map((edge) => edge.node.role).sort()).toEqual(['member', 'owner']);
  });

  it('updateTenant: a plain member may not rename (403)', async () => {
    const problem = problemOf(await grace.updateTenant({ params: { path: tenantPath() }, body: { name: 'Mine now' } }));
    expect(problem).toMatchObject({ status: 403, code: 'forbidden' });
  });

  it('getMember: one member, with the ETag a role change checks', async () => {
    const result = await grace.getMember({ params: { path: { ...tenantPath(), user_id: graceId } } });
    expect(unwrap(result).member).toMatchObject({ role: 'member', user: { id: graceId } });
    expect(result.response.headers.get('ETag')).toMatch(/^"[A-Za-z0-9_-]+"$/);
  });

  it('getMember: a user who is not a member is 404, and so is the tenant to an outsider', async () => {
    const { user } = unwrap(await stranger.getMe());
    const notMember = problemOf(await ada.getMember({ params: { path: { ...tenantPath(), user_id: user.id } } }));
    expect(notMember).toMatchObject({ status: 404, code: 'not_found' });
    const outsider = problemOf(await stranger.getMember({ params: { path: { ...tenantPath(), user_id: graceId } } }));
    expect(outsider).toMatchObject({ status: 404, code: 'not_found' });
  });

  it('updateMember: changes a role, with If-Match from getMember', async () => {
    const read = await ada.getMember({ params: { path: { ...tenantPath(), user_id: graceId } } });
    const etag = read.response.headers.get('ETag')!;
    const { member } = unwrap(
      await ada.updateMember({
        params: { path: { ...tenantPath(), user_id: graceId }, header: { 'If-Match': etag } },
        body: { role: 'admin' },
      }),
    );
    expect(member.role).toBe('admin');
  });

  it('declineInvitation / removeMember: 204; a member may leave; the last owner cannot leave (409)', async () => {
    const created = unwrap(
      await admin.adminCreateUser({ body: { email: freshEmail('newcomer'), firstName: 'New', lastName: 'Comer' } }),
    );
    const newcomer = contractClient(server.baseUrl, created.apiKey.secret, recorder);
    const invite = async () =>
      unwrap(
        await ada.addMember({ params: { path: tenantPath() }, body: { email: created.user.email, role: 'member' } }),
      ).invitation;
    const declined = await newcomer.declineInvitation({ params: { path: { invitation_id: (await invite()).id } } });
    expect(declined.response.status).toBe(204);
    unwrap(await newcomer.acceptInvitation({ params: { path: { invitation_id: (await invite()).id } } }));
    const removed = await grace.removeMember({ params: { path: { ...tenantPath(), user_id: created.user.id } } });
    expect(removed.response.status).toBe(204);

    const { user: adaUser } = unwrap(await ada.getMe());
    const problem = problemOf(await ada.removeMember({ params: { path: { ...tenantPath(), user_id: adaUser.id } } }));
    expect(problem).toMatchObject({ status: 409, code: 'last_owner' });
  });
});

describe('Works', () => {
  it('createWork: 201, description defaults to ""', async () => {
    const result = await grace.createWork({ params: { path: tenantPath() }, body: { name: 'Annual report 2026' } });
    work = unwrap(result).work;
    expect(result.response.status).toBe(201);
    expect(result.response.headers.get('Location')).toBe(`/v1/tenants/${tenant.id}/works/${work.id}`);
    expect(work).toMatchObject({ slug: 'annual-report-2026', description: '', discardedAt: null });
  });

  it('getWork', async () => {
    expect(unwrap(await ada.getWork({ params: { path: workPath() } })).work).toEqual(work);
  });

  it('updateWork: changes the description', async () => {
    const { work: updated } = unwrap(
      await ada.updateWork({ params: { path: workPath() }, body: { description: 'Figures and sign-off.' } }),
    );
    expect(updated).toMatchObject({ id: work.id, slug: work.slug, description: 'Figures and sign-off.' });
    work = updated;
  });

  it('listWorks: kept works by default', async () => {
    const { works } = unwrap(await ada.listWorks({ params: { path: tenantPath() } }));
    expect(works.edges.map((edge) => edge.node.id)).toEqual([work.id]);
  });
});

describe('Requests', () => {
  it('createRequest: a pending request; 201', async () => {
    const dueAt = daysFromNow(30);
    const result = await ada.createRequest({
      params: { path: workPath() },
      body: {
        title: 'Confirm Q3 figures',
        recipient: { email: 'recipient@example.com', firstName: 'Rae' },
        dueAt,
      },
    });
    request = unwrap(result).request;
    expect(result.response.status).toBe(201);
    expect(request).toMatchObject({
      status: 'pending',
      workId: work.id,
      message: '',
      dueAt,
    });
  });

  it('createRequestBatch: every item created, in item order; 201', async () => {
    const dueAt = daysFromNow(30);
    const result = await ada.createRequestBatch({
      params: { path: workPath() },
      body: {
        defaults: { title: 'Confirm your balance', dueAt },
        items: [
          { recipient: { email: 'batch-one@example.com', firstName: 'One' } },
          { title: 'Own title', recipient: { email: 'batch-two@example.com' } },
        ],
      },
    });
    expect(result.response.status).toBe(201);
    const { batch } = unwrap(result);
    expect(batch.count).toBe(2);
    expect(batch.requests.map((created) => [created.title, created.recipient.email, created.dueAt])).toEqual([
      ['Confirm your balance', 'batch-one@example.com', dueAt],
      ['Own title', 'batch-two@example.com', dueAt],
    ]);
  });

  it('getRequest', async () => {
    expect(unwrap(await grace.getRequest({ params: { path: requestPath() } })).request).toEqual(request);
  });

  it('validateRequest: not from pending (409 with currentStatus and allowedActions)', async () => {
    const problem = problemOf(await ada.validateRequest({ params: { path: requestPath() } }));
    expect(problem).toMatchObject({ status: 409, code: 'invalid_transition', currentStatus: 'pending' });
    expect([...(problem.allowedActions ?? [])].sort()).toEqual(['cancel', 'confirm', 'early_validate']);
  });

  it('confirmRequest: pending → confirmed with the answer', async () => {
    const confirmed = unwrap(
      await ada.confirmRequest({ params: { path: requestPath() }, body: { answer: 'The figures are correct.' } }),
    );
    expect(confirmed).toMatchObject({ status: 'confirmed', answer: 'The figures are correct.' });
    expect(confirmed.confirmedAt).not.toBeNull();
  });

  it('validateRequest: confirmed → validated (standard)', async () => {
    const validated = unwrap(await ada.validateRequest({ params: { path: requestPath() } }));
    expect(validated).toMatchObject({ status: 'validated', validation: 'standard' });
  });

  it('earlyValidateRequest: pending → validated (early)', async () => {
    const other = unwrap(
      await ada.createRequest({
        params: { path: workPath() },
        body: { title: 'Sign the appendix', recipient: { email: 'r2@example.com' } },
      }),
    ).request;
    const validated = unwrap(await ada.earlyValidateRequest({ params: { path: requestPath(other.id) } }));
    expect(validated).toMatchObject({ id: other.id, status: 'validated', validation: 'early' });
  });

  it('cancelRequest: pending → cancelled with the reason; repeating it returns it unchanged', async () => {
    const other = unwrap(
      await ada.createRequest({
        params: { path: workPath() },
        body: { title: 'Old request', recipient: { email: 'r3@example.com' } },
      }),
    ).request;
    const cancelled = unwrap(
      await ada.cancelRequest({
        params: { path: requestPath(other.id) },
        body: { reason: 'Sent to the wrong person.' },
      }),
    );
    expect(cancelled).toMatchObject({ status: 'cancelled', cancelReason: 'Sent to the wrong person.' });
    expect(unwrap(await ada.cancelRequest({ params: { path: requestPath(other.id) } }))).toEqual(cancelled);
  });

  describe('Recipients', () => {
    let token: string;
    let pending: Schemas['Request'];

    /** The answer link of the newest email to `email`, once the sender has sent it. */
    async function linkTo(email: string, count = 1): Promise<string> {
      const mails = await eventually(() => {
        const mails = mailbox.messages().filter((mail) => mail.to === email);
        expect(mails.length).toBeGreaterThanOrEqual(count);
        return mails;
      });
      return /\/r\/([A-Za-z0-9_-]{43})/.exec(mails[0]!.text)![1]!;
    }

    it('resendRequest: a new email with a new link; the old link stops working', async () => {
      mailTenants.push(tenant.id);
      pending = unwrap(
        await ada.createRequest({
          params: { path: workPath() },
          body: { title: 'Please answer', recipient: { email: 'answer@example.com', firstName: 'Ann' } },
        }),
      ).request;
      const first = await linkTo('answer@example.com');
      const { request: resent } = unwrap(await ada.resendRequest({ params: { path: requestPath(pending.id) } }));
      expect(resent).toMatchObject({ id: pending.id, status: 'pending', emailDelivery: { status: 'queued' } });
      token = await linkTo('answer@example.com', 2);
      expect(token).not.toBe(first);
      const old = await contractClient(server.baseUrl, first, recorder).getRecipientRequest();
      expect(problemOf(old)).toMatchObject({ status: 404, code: 'not_found' });
    });

    it('getRecipientRequest: the request as its recipient sees it', async () => {
      const { request: view } = unwrap(await contractClient(server.baseUrl, token, recorder).getRecipientRequest());
      expect(view).toMatchObject({ status: 'pending', title: 'Please answer', workName: work.name, answer: null });
    });

    it('answerRecipientRequest: confirms the request with the answer, recorded as the recipient', async () => {
      const recipient = contractClient(server.baseUrl, token, recorder);
      const { request: view } = unwrap(await recipient.answerRecipientRequest({ body: { answer: 'Done.' } }));
      expect(view).toMatchObject({ status: 'confirmed', answer: 'Done.' });
      const again = await recipient.answerRecipientRequest({ body: { answer: 'Again.' } });
      expect(problemOf(again)).toMatchObject({ status: 409, code: 'invalid_transition', currentStatus: 'confirmed' });
      const { events } = unwrap(await ada.listRequestEvents({ params: { path: requestPath(pending.id) } }));
      expect(events.edges[0]!.node).toMatchObject({ action: 'confirm', actorType: 'recipient', note: 'Done.' });
    });
  });

  it('listRequests: filtered by status', async () => {
    const { requests } = unwrap(
      await ada.listRequests({ params: { path: workPath(), query: { status: 'validated', limit: 10 } } }),
    );
    expect(requests.totalCount).toBe(2);
    expect(requests.edges.every((edge) => edge.node.status === 'validated')).toBe(true);
  });

  it('listRequests / listWorks: q matches the start of words, ignoring case and accents; the count says it is exact', async () => {
    const { requests } = unwrap(await ada.listRequests({ params: { path: workPath(), query: { q: 'CONF q3' } } }));
    expect(requests.edges.map((edge) => edge.node.id)).toContain(request.id);
    expect(requests).toMatchObject({ totalCount: requests.edges.length, totalCountCapped: false });
    const { works } = unwrap(
      await ada.listWorks({ params: { path: tenantPath(), query: { q: work.name.slice(0, 3) } } }),
    );
    expect(works.edges.map((edge) => edge.node.id)).toEqual([work.id]);
  });

  it('listTenantRequests: every request of the tenant, filtered by status and recipient', async () => {
    const { requests } = unwrap(
      await ada.listTenantRequests({
        params: { path: tenantPath(), query: { status: 'validated,cancelled', recipient: 'Recipient@Example.com' } },
      }),
    );
    expect(requests.edges.length).toBeGreaterThan(0);
    expect(requests.totalCountCapped).toBe(false);
    for (const { node } of requests.edges) {
      expect(['validated', 'cancelled']).toContain(node.status);
      expect(node.recipient.email).toBe('recipient@example.com');
    }
    const problem = problemOf(
      await ada.listTenantRequests({ params: { path: tenantPath(), query: { status: 'pending,done' } } }),
    );
    expect(problem).toMatchObject({ status: 400, code: 'validation_failed' });
  });

  it('listEvents: the tenant’s events, newest first, the webhook’s own bodies; filtered by type', async () => {
    const { events } = unwrap(await grace.listEvents({ params: { path: tenantPath() } }));
    const ids = events.edges.map((edge) => edge.node.id);
    expect(ids).toEqual([...ids].sort().reverse());
    const created = events.edges.find(
      (edge) => edge.node.type === 'request.created' && edge.node.data.request.id === request.id,
    );
    expect(created?.node).toMatchObject({
      tenantId: tenant.id,
      data: { request: { id: request.id, status: 'pending' } },
    });
    const { events: validated } = unwrap(
      await ada.listEvents({ params: { path: tenantPath(), query: { type: 'request.validated' } } }),
    );
    expect(validated.edges.length).toBeGreaterThan(0);
    expect(validated.edges.every((edge) => edge.node.type === 'request.validated')).toBe(true);
  });

  it('listRequestEvents: one event per transition, newest first', async () => {
    const { events } = unwrap(await ada.listRequestEvents({ params: { path: requestPath() } }));
    expect(events.edges.map((edge) => edge.node.action)).toEqual(['validate', 'confirm']);
    expect(events.edges[1]!.node).toMatchObject({
      fromStatus: 'pending',
      toStatus: 'confirmed',
      note: 'The figures are correct.',
    });
  });
});

describe('Works, discarded', () => {
  it('discardWork: sets discardedAt; its requests become read-only (409)', async () => {
    const { work: discarded } = unwrap(await ada.discardWork({ params: { path: workPath() } }));
    expect(discarded.discardedAt).not.toBeNull();
    const problem = problemOf(
      await ada.createRequest({
        params: { path: workPath() },
        body: { title: 'Too late', recipient: { email: 'r4@example.com' } },
      }),
    );
    expect(problem).toMatchObject({ status: 409, code: 'work_discarded' });
    const { works } = unwrap(await ada.listWorks({ params: { path: tenantPath(), query: { discarded: 'true' } } }));
    expect(works.edges.map((edge) => edge.node.id)).toEqual([work.id]);
  });

  it('undiscardWork: restores it', async () => {
    const { work: restored } = unwrap(await ada.undiscardWork({ params: { path: workPath() } }));
    expect(restored.discardedAt).toBeNull();
  });
});

describe('Webhooks', () => {
  let endpoint: Schemas['CreatedWebhookEndpoint'];
  const endpointPath = () => ({ tenant_id: tenant.id, endpoint_id: endpoint.id });

  it('createWebhookEndpoint: shows the whsec_ secret once', async () => {
    const result = await ada.createWebhookEndpoint({
      params: { path: tenantPath() },
      body: { url: 'http://127.0.0.1:9/hooks', description: 'Contract', eventTypes: ['request.confirmed'] },
    });
    endpoint = unwrap(result).webhookEndpoint;
    expect(result.response.status).toBe(201);
    expect(endpoint).toMatchObject({ enabled: true, disabledReason: null, eventTypes: ['request.confirmed'] });
    expect(endpoint.secret).toMatch(/^whsec_/);
  });

  it('listWebhookEndpoints / getWebhookEndpoint: never show the secret', async () => {
    const { webhookEndpoints } = unwrap(await ada.listWebhookEndpoints({ params: { path: tenantPath() } }));
    expect(webhookEndpoints.edges.map((edge) => edge.node.id)).toContain(endpoint.id);
    const { webhookEndpoint } = unwrap(await ada.getWebhookEndpoint({ params: { path: endpointPath() } }));
    expect(webhookEndpoint).not.toHaveProperty('secret');
  });

  it('updateWebhookEndpoint: disabling says why', async () => {
    const { webhookEndpoint } = unwrap(
      await ada.updateWebhookEndpoint({ params: { path: endpointPath() }, body: { enabled: false } }),
    );
    expect(webhookEndpoint).toMatchObject({ enabled: false, disabledReason: 'by_user' });
  });

  it('rotateWebhookEndpointSecret: a new secret, the old one signing for 24 hours more', async () => {
    const { webhookEndpoint } = unwrap(await ada.rotateWebhookEndpointSecret({ params: { path: endpointPath() } }));
    expect(webhookEndpoint.secret).not.toBe(endpoint.secret);
    expect(webhookEndpoint.previousSecretExpiresAt).not.toBeNull();
  });

  it('testWebhookEndpoint / listWebhookDeliveries / retryWebhookDelivery: a queued test event', async () => {
    const { delivery } = unwrap(await ada.testWebhookEndpoint({ params: { path: endpointPath() } }));
    expect(delivery).toMatchObject({
      status: 'pending',
      event: { type: 'webhook_endpoint.test', tenantId: tenant.id },
    });
    const { deliveries } = unwrap(await ada.listWebhookDeliveries({ params: { path: endpointPath() } }));
    expect(deliveries.edges.map((edge) => edge.node.id)).toEqual([delivery.id]);
    const retried = unwrap(
      await ada.retryWebhookDelivery({ params: { path: { ...endpointPath(), delivery_id: delivery.id } } }),
    );
    expect(retried.delivery.id).toBe(delivery.id);
  });

  it('createWebhookEndpoint: an outsider sees no tenant (404)', async () => {
    const body = { url: 'http://127.0.0.1:9/hooks' };
    const member = await stranger.createWebhookEndpoint({ params: { path: tenantPath() }, body });
    expect(problemOf(member)).toMatchObject({ status: 404, code: 'not_found' });
  });

  it('deleteWebhookEndpoint: gone afterwards', async () => {
    const result = await ada.deleteWebhookEndpoint({ params: { path: endpointPath() } });
    expect(result.response.status).toBe(204);
    expect(problemOf(await ada.getWebhookEndpoint({ params: { path: endpointPath() } }))).toMatchObject({
      status: 404,
    });
  });
});

describe('contract coverage', () => {
  it('every response so far matched the contract, and every operation of the spec succeeded at least once', () => {
    const succeeded = recorder.succeeded();
    const missing = specOperationIds.filter((operationId) => !succeeded.has(operationId));
    expect(missing).toEqual([]);
    // And the errors partners switch on were seen as well.
    const errorStatuses = new Set(recorder.calls.filter((call) => call.status >= 400).map((call) => call.status));
    expect([...errorStatuses].sort()).toEqual([400, 401, 403, 404, 409]);
  });

  // The compatibility check (scripts/previous-client.mjs): the previous release's client, strictly checked against
  // the previous release's contract, worked against today's server for every operation it has.
  (previousOperationIds ? it : it.skip)('every operation of the previous release succeeded through its client', () => {
    const older = recorder.calls.filter((call) => call.through === 'previous');
    const succeeded = new Set(older.filter((call) => call.status < 300).map((call) => call.operationId));
    expect([...previousOperationIds!].filter((operationId) => !succeeded.has(operationId))).toEqual([]);
    console.log(
      `compatibility: ${older.length} calls through the previous release's client (${succeeded.size} operations), each response valid against its contract`,
    );
  });
});
