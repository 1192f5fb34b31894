import { startSessionJanitor } from '../../src/jobs/session-cleanup';
import { DevMailbox } from '../../src/mail/transport';
import { silentLogger } from '../../src/observability/logger';
import { sendStatement } from '@works-api/prisma';
import { createTenant, createWork, freshEmail } from '../support/fixtures';
import { expectProblem } from '../support/problems';
import { inviteEmail } from '../support/roles';
import { startTestServer, type TestServer } from '../support/server';

/**
 * People sign in by email (issue 40): a link and a code, once, for 15 minutes; a session in an HttpOnly cookie,
 * stored hashed, rotated, listed and revocable, idle and absolute lifetimes; cookie requests that change anything
 * only from our own pages; never a cookie and a key at once; sign-up by invitation; abuse capped.
 */
let server: TestServer;
let mailbox: DevMailbox;
/**
 * On PostgreSQL a jest worker's files share one database, and an earlier file's queued emails go out with these
 * tests' (sign-in emails first): the mailboxes keep every email, not the dev mailbox's last 100.
 */
const EVERY_EMAIL = 100_000;

beforeAll(async () => {
  mailbox = new DevMailbox(silentLogger(), EVERY_EMAIL);
  server = await startTestServer({ mail: { transport: mailbox, manual: true } });
});
afterAll(async () => server.close());

const SAME_ORIGIN = { 'sec-fetch-site': 'same-origin' };

const seen = new Set<string>();
/** Sends the outbox until a new sign-in email to `email` is in the mailbox; its link's token and its code. */
async function signInEmailTo(email: string): Promise<{ token: string; code: string; text: string } | undefined> {
  for (let round = 0; round < 20; round++) {
    const mail = mailbox
      .messages()
      .find((message) => message.to === email && /sign-in/i.test(message.subject) && !seen.has(message.id));
    if (mail) {
      seen.add(mail.id);
      const token = /#token=([A-Za-z0-9_-]{43})/.exec(mail.text)?.[1];
      const code = /code: ([A-Z0-9]{4}-[A-Z0-9]{4})/.exec(mail.text)?.[1];
      return { token: token!, code: code!, text: mail.text };
    }
    if ((await server.mailSender!.runOnce()) === 0 && round > 2) return undefined;
  }
  return undefined;
}

async function askForSignIn(email: string, headers: Record<string, string> = {}) {
  return server.call('/v1/sessions/email', { method: 'POST', json: { email }, headers });
}

async function exchange(body: Record<string, unknown>, headers: Record<string, string> = {}) {
  return server.call('/v1/sessions', { method: 'POST', json: body, headers });
}

/** The session cookie a response set: `works_session=<value>` and its attributes. */
function cookieOf(res: Response): { pair: string; value: string; attributes: string } {
  const header = res.headers.getSetCookie().find((line) => /^(__Host-)?works_session=/.test(line));
  if (!header) throw new Error('no session cookie');
  const [pair, ...attributes] = header.split('; ');
  return { pair: pair!, value: pair!.split('=')[1]!, attributes: attributes.join('; ') };
}

/** Signs `email` in through its emailed link; the cookie pair to send back. */
async function signedIn(email: string, extra: Record<string, unknown> = {}): Promise<string> {
  expect((await askForSignIn(email)).status).toBe(202);
  const sent = await signInEmailTo(email);
  const res = await exchange({ token: sent!.token, ...extra });
  expect(res.status).toBe(201);
  return cookieOf(res).pair;
}

const asCookie = (cookie: string, headers: Record<string, string> = {}) => ({ cookie, ...headers });

describe('emailed sign-in', () => {
  test('answers 202 the same for an address with an account and one without, and mails only the first', async () => {
    const user = await server.createUser('ada');
    const stranger = freshEmail('nobody');
    const known = await askForSignIn(user.email);
    const unknown = await askForSignIn(stranger);
    expect([known.status, unknown.status]).toEqual([202, 202]);
    const [knownBody, unknownBody] = [
      await known.json<Record<string, unknown>>(),
      await unknown.json<Record<string, unknown>>(),
    ];
    expect(Object.keys(knownBody.signIn as object)).toEqual(Object.keys(unknownBody.signIn as object));
    expect(knownBody).toEqual({ signIn: { email: user.email, validForSeconds: 900 } });
    const sent = await signInEmailTo(user.email);
    expect(sent?.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(sent?.code).toMatch(/^[A-Z0-9]{4}-[A-Z0-9]{4}$/);
    expect(sent?.text).toContain('http://works.test/console/sign-in#token=');
    expect(await signInEmailTo(stranger)).toBeUndefined(); // SIGNUP=invite: no account, no invitation, no email
  });

  test('the link signs in once: a session cookie, HttpOnly and SameSite=Lax; the link and cookie stored hashed', async () => {
    const user = await server.createUser('grace');
    await askForSignIn(user.email);
    const { token } = (await signInEmailTo(user.email))!;
    const res = await exchange({ token });
    expect(res.status).toBe(201);
    expect(res.headers.get('location')).toMatch(/^\/v1\/me\/sessions\/[0-9a-f-]{36}$/);
    const body = await res.json<{ session: { current: boolean }; user: { email: string } }>();
    expect(body).toMatchObject({ session: { current: true }, user: { email: user.email } });
    const cookie = cookieOf(res);
    // Plain-HTTP development: no __Host- prefix and no Secure (browsers would refuse both).
    expect(cookie.pair).toMatch(/^works_session=ws_[A-Za-z0-9_-]{43}$/);
    expect(cookie.attributes).toBe('Path=/; HttpOnly; SameSite=Lax; Max-Age=2592000');
    const me = await server.call('/v1/me', { headers: asCookie(cookie.pair) });
    expect(me.status).toBe(200);
    expect((await me.json()).user.email).toBe(user.email);
    // Used: 410, saying how to get a new one.
    const again = await exchange({ token });
    expect((await expectProblem(again, 410, 'sign_in_used')).detail).toMatch(/new one/);
    // Nothing stored or logged could be used again.
    const stored = JSON.stringify(
      await sendStatement(
        server.database,
        'SELECT * FROM sign_in_links UNION ALL SELECT NULL, NULL, NULL, token_hash, NULL, NULL, created_at, expires_at, NULL FROM sessions',
        {},
      ),
    );
    expect(stored).not.toContain(token);
    expect(stored).not.toContain(cookie.value);
    expect(server.rawLogs.join('\n')).not.toContain(token);
    expect(server.rawLogs.join('\n')).not.toContain(cookie.value);
  });

  test('a forged or expired link is refused, saying how to get a new one', async () => {
    await expectProblem(await exchange({ token: 'A'.repeat(43) }), 400, 'invalid_sign_in');
    await expectProblem(await exchange({ token: 'short' }), 400, 'invalid_sign_in');
    const user = await server.createUser('late');
    await askForSignIn(user.email);
    const { token } = (await signInEmailTo(user.email))!;
    await sendStatement(
      server.database,
      `UPDATE sign_in_links SET expires_at = now() - interval '1 second' WHERE email = :email`,
      {
        email: user.email,
      },
    );
    const problem = await expectProblem(await exchange({ token }), 410, 'sign_in_expired');
    expect(problem.detail).toMatch(/15 minutes.*new one/);
  });

  test('the code signs in on another device; wrong codes are counted and stop the code after five', async () => {
    const user = await server.createUser('codes');
    await askForSignIn(user.email);
    const { code } = (await signInEmailTo(user.email))!;
    const res = await exchange({ email: user.email.toUpperCase(), code: code.toLowerCase().replace('-', ' ') });
    expect(res.status).toBe(201);
    await expectProblem(await exchange({ email: user.email, code }), 410, 'sign_in_used');

    const other = await server.createUser('guesser');
    await askForSignIn(other.email);
    const real = (await signInEmailTo(other.email))!.code;
    const wrong = real.startsWith('A') ? 'BBBB-BBBB' : 'AAAA-AAAA';
    for (let i = 0; i < 5; i++)
      await expectProblem(await exchange({ email: other.email, code: wrong }), 400, 'invalid_sign_in');
    await expectProblem(await exchange({ email: other.email, code: real }), 400, 'invalid_sign_in');
  });

  test("goes out ahead of a bulk send's emails queued before it (someone waits at the sign-in page)", async () => {
    const sender = await server.createUser('bulk-sender');
    const tenant = await createTenant(sender, 'Bulk before sign-in');
    const work = await createWork(sender, tenant.id);
    const items = Array.from({ length: 40 }, (_, i) => ({ recipient: { email: freshEmail(`queued${i}`) } }));
    const batch = await server.callAs(sender, 'POST', `/v1/tenants/${tenant.id}/works/${work.id}/request-batches`, {
      defaults: { title: 'Queued first' },
      items,
    });
    expect(batch.status).toBe(201);
    const person = await server.createUser('waiting');
    expect((await askForSignIn(person.email)).status).toBe(202);
    // One round claims 8 emails (the sender's maxInFlight): the sign-in email is among them, not 5 rounds later.
    expect(await server.mailSender!.runOnce()).toBe(8);
    const sent = mailbox
      .messages()
      .filter((message) => /sign-in/i.test(message.subject) && message.to === person.email);
    expect(sent).toHaveLength(1); // (the other 7: the batch's, or on PostgreSQL older ones of earlier files)
  });
});

describe('sessions', () => {
  test('rotate at sign-in, list with the current one marked, end one, and sign out everywhere', async () => {
    const user = await server.createUser('many');
    const first = await signedIn(user.email);
    // Signing in again from the same browser ends the session it had (the id rotates).
    await askForSignIn(user.email);
    const { token } = (await signInEmailTo(user.email))!;
    const rotated = await exchange({ token }, asCookie(first, SAME_ORIGIN));
    expect(rotated.status).toBe(201);
    const second = cookieOf(rotated).pair;
    expect(second).not.toBe(first);
    await expectProblem(await server.call('/v1/me', { headers: asCookie(first) }), 401, 'unauthenticated');

    const list = await server.call('/v1/me/sessions', { headers: asCookie(second) });
    expect(list.status).toBe(200);
    const sessions = (await list.json()).sessions;
    expect(sessions.totalCount).toBe(1);
    expect(sessions.edges[0]!.node).toMatchObject({ current: true });

    // With the API key: the same sessions, none current; ending one by id ends it.
    const viaKey = (await (await server.call('/v1/me/sessions', { apiKey: user.apiKey })).json()).sessions;
    expect(viaKey.edges.map((edge) => edge.node.current)).toEqual([false]);
    const id = viaKey.edges[0]!.node.id;
    expect((await server.call(`/v1/me/sessions/${id}`, { method: 'DELETE', apiKey: user.apiKey })).status).toBe(204);
    await expectProblem(await server.call('/v1/me', { headers: asCookie(second) }), 401, 'unauthenticated');
    await expectProblem(
      await server.call(`/v1/me/sessions/${id}`, { method: 'DELETE', apiKey: user.apiKey }),
      404,
      'not_found',
    );

    // Sign out (the current session) clears the cookie; sign out everywhere ends them all.
    const third = await signedIn(user.email);
    const thirdId = (await (await server.call('/v1/me/sessions', { headers: asCookie(third) })).json()).sessions
      .edges[0]!.node.id;
    const out = await server.call(`/v1/me/sessions/${thirdId}`, {
      method: 'DELETE',
      headers: asCookie(third, SAME_ORIGIN),
    });
    expect(out.status).toBe(204);
    expect(out.headers.getSetCookie()).toEqual(['works_session=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0']);
    const a = await signedIn(user.email);
    const b = await signedIn(user.email);
    const everywhere = await server.call('/v1/me/sessions', { method: 'DELETE', headers: asCookie(a, SAME_ORIGIN) });
    expect(everywhere.status).toBe(204);
    for (const cookie of [a, b])
      await expectProblem(await server.call('/v1/me', { headers: asCookie(cookie) }), 401, 'unauthenticated');
    // The API key was not touched.
    expect((await server.call('/v1/me', { apiKey: user.apiKey })).status).toBe(200);
  });

  test('a session idle past SESSION_IDLE_TIMEOUT or past SESSION_LIFETIME no longer authenticates', async () => {
    const user = await server.createUser('idle');
    const idle = await signedIn(user.email);
    const old = await signedIn(user.email);
    await sendStatement(
      server.database,
      `UPDATE sessions SET last_used_at = now() - interval '25 hours' WHERE token_hash = encode(sha256(convert_to(:value, 'UTF8')), 'hex')`,
      {
        value: idle.split('=')[1],
      },
    );
    await sendStatement(
      server.database,
      `UPDATE sessions SET expires_at = now() - interval '1 second' WHERE token_hash = encode(sha256(convert_to(:value, 'UTF8')), 'hex')`,
      {
        value: old.split('=')[1],
      },
    );
    const idleRes = await server.call('/v1/me', { headers: asCookie(idle) });
    expect((await expectProblem(idleRes, 401, 'unauthenticated')).detail).toMatch(/unused.*Sign in again/);
    expect(idleRes.headers.getSetCookie()[0]).toMatch(/^works_session=; .*Max-Age=0$/);
    expect(
      (await expectProblem(await server.call('/v1/me', { headers: asCookie(old) }), 401, 'unauthenticated')).detail,
    ).toMatch(/lifetime/);
  });

  test('a cookie of another deployment is 401, says so, and is cleared', async () => {
    const res = await server.call('/v1/me', { headers: asCookie(`works_session=ws_${'x'.repeat(43)}`) });
    expect((await expectProblem(res, 401, 'unauthenticated')).detail).toMatch(/another deployment.*Sign in again/);
    expect(res.headers.getSetCookie()[0]).toMatch(/Max-Age=0/);
  });

  test("a session has its user's power: it creates tenants and API keys", async () => {
    const user = await server.createUser('power');
    const cookie = await signedIn(user.email);
    const key = await server.call('/v1/api-keys', {
      method: 'POST',
      json: { name: 'From the console' },
      headers: asCookie(cookie, SAME_ORIGIN),
    });
    expect(key.status).toBe(201);
    expect((await key.json()).apiKey.secret).toMatch(/^wk_/);
  });
});

describe('cross-site requests and mixed credentials', () => {
  test('a cookie on a cross-site POST is refused; from our own pages it works; reads need nothing more', async () => {
    const user = await server.createUser('csrf');
    const cookie = await signedIn(user.email);
    const create = (headers: Record<string, string>) =>
      server.call('/v1/tenants', { method: 'POST', json: { name: 'Forged' }, headers: asCookie(cookie, headers) });
    // Fetch Metadata (every current browser), a cross-site form post:
    await expectProblem(
      await create({ 'sec-fetch-site': 'cross-site', origin: 'https://evil.example' }),
      401,
      'unauthenticated',
    );
    await expectProblem(await create({ 'sec-fetch-site': 'same-site' }), 401, 'unauthenticated');
    // A browser without Fetch Metadata: Origin decides.
    await expectProblem(await create({ origin: 'https://evil.example' }), 401, 'unauthenticated');
    // No browser header at all: a cookie is not how scripts authenticate.
    await expectProblem(await create({}), 401, 'unauthenticated');
    expect((await (await server.call('/v1/tenants', { apiKey: user.apiKey })).json()).tenants.totalCount).toBe(0);
    // The console's own requests.
    expect((await create(SAME_ORIGIN)).status).toBe(201);
    expect((await create({ origin: server.baseUrl })).status).toBe(201);
    // A read from anywhere (SameSite and CORS keep other sites from reading it).
    expect(
      (await server.call('/v1/tenants', { headers: asCookie(cookie, { 'sec-fetch-site': 'cross-site' }) })).status,
    ).toBe(200);
  });

  test('a sign-in from another site is refused (login CSRF); curl needs no header', async () => {
    await expectProblem(
      await askForSignIn(freshEmail(), { 'sec-fetch-site': 'cross-site' }),
      403,
      'cross_site_request',
    );
    await expectProblem(
      await exchange({ token: 'A'.repeat(43) }, { origin: 'https://evil.example' }),
      403,
      'cross_site_request',
    );
    expect((await askForSignIn(freshEmail(), SAME_ORIGIN)).status).toBe(202);
  });

  test('a cookie and a Bearer key at once are refused; a Bearer key alone works as before', async () => {
    const user = await server.createUser('both');
    const cookie = await signedIn(user.email);
    const both = await server.call('/v1/me', { apiKey: user.apiKey, headers: asCookie(cookie) });
    await expectProblem(both, 400, 'validation_failed', '/headers/authorization');
    expect((await server.call('/v1/me', { apiKey: user.apiKey })).status).toBe(200);
  });
});

describe('sign-up and abuse', () => {
  test('an invited person without an account signs in from the invitation, types their names, and accepts', async () => {
    const owner = await server.createUser('inviter');
    const tenant = await createTenant(owner);
    const email = freshEmail('invited');
    await inviteEmail(owner, tenant.id, email, 'member', { firstName: 'Typed', lastName: 'ByInviter' });
    await askForSignIn(email);
    const sent = (await signInEmailTo(email))!;
    expect(sent.text).toMatch(/creates your account/);
    const missing = await expectProblem(
      await exchange({ token: sent.token }),
      400,
      'names_required',
      '/body/firstName',
    );
    expect(missing.detail).toMatch(/first and last name/);
    const res = await exchange({ token: sent.token, firstName: 'Mary', lastName: 'Jackson' });
    expect(res.status).toBe(201);
    expect((await res.json()).user).toMatchObject({ email, firstName: 'Mary', lastName: 'Jackson' });
    const cookie = cookieOf(res).pair;
    const invitations = (await (await server.call('/v1/me/invitations', { headers: asCookie(cookie) })).json())
      .invitations;
    const accepted = await server.call(`/v1/me/invitations/${invitations.edges[0]!.node.id}/accept`, {
      method: 'POST',
      headers: asCookie(cookie, SAME_ORIGIN),
    });
    expect(accepted.status).toBe(200);
  });

  test('sign-in bombing of one address is capped (+tag variants count with it): 429 with Retry-After', async () => {
    const user = await server.createUser('bombed');
    const [local, domain] = user.email.split('@');
    for (let i = 0; i < 5; i++)
      expect((await askForSignIn(i % 2 ? `${local}+${i}@${domain}` : user.email)).status).toBe(202);
    const refused = await askForSignIn(`${local}+x@${domain}`);
    const problem = await expectProblem(refused, 429, 'sign_in_limit_reached');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(3000);
    expect(problem.detail).toMatch(/5 sign-in emails/);
  });
});

describe('sign-in emails count with every other email to the address', () => {
  test('requests to an address and sign-ins of it share MAX_EMAILS_PER_ADDRESS_PER_DAY (take_mail_allowance)', async () => {
    const capped = await startTestServer({ limits: { emailsPerAddressPerDay: 3 } });
    try {
      const sender = await capped.createUser('sender');
      const person = await capped.createUser('person');
      const tenant = await createTenant(sender);
      const work = await createWork(sender, tenant.id);
      const [local, domain] = person.email.split('@');
      for (const to of [person.email, `${local}+news@${domain}`]) {
        const sent = await capped.call(`/v1/tenants/${tenant.id}/works/${work.id}/requests`, {
          method: 'POST',
          apiKey: sender.apiKey,
          json: { title: 'Figures', recipient: { email: to } },
        });
        expect(sent.status).toBe(201);
      }
      const ask = () =>
        capped.call('/v1/sessions/email', { method: 'POST', json: { email: person.email.toUpperCase() } });
      expect((await ask()).status).toBe(202); // the third email of the day to this address
      const refused = await ask();
      const problem = await expectProblem(refused, 429, 'address_email_limit_reached');
      expect(problem.detail).toMatch(/3 emails/);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      // And the other way: the sign-in counted, so a tenant's next email to the address is refused too.
      const after = await capped.call(`/v1/tenants/${tenant.id}/works/${work.id}/requests`, {
        method: 'POST',
        apiKey: sender.apiKey,
        json: { title: 'More figures', recipient: { email: person.email } },
      });
      await expectProblem(after, 429, 'address_email_limit_reached');
    } finally {
      await capped.close();
    }
  });
});

describe('settings', () => {
  test('SIGNUP=open mails any address and makes its account; SIGNUP=closed mails only accounts', async () => {
    const openBox = new DevMailbox(silentLogger(), EVERY_EMAIL);
    const open = await startTestServer({
      mail: { transport: openBox, manual: true, signUp: 'open' },
      sessions: { signUp: 'open' },
    });
    const closedBox = new DevMailbox(silentLogger(), EVERY_EMAIL);
    const closed = await startTestServer({
      mail: { transport: closedBox, manual: true, signUp: 'closed' },
      sessions: { signUp: 'closed' },
    });
    try {
      const newcomer = freshEmail('newcomer');
      await open.call('/v1/sessions/email', { method: 'POST', json: { email: newcomer } });
      while ((await open.mailSender!.runOnce()) > 0);
      const mail = openBox.messages().find((message) => message.to === newcomer);
      expect(mail).toBeDefined();
      const token = /#token=([A-Za-z0-9_-]{43})/.exec(mail!.text)![1];
      const res = await open.call('/v1/sessions', {
        method: 'POST',
        json: { token, firstName: 'New', lastName: 'Comer' },
      });
      expect(res.status).toBe(201);

      const owner = await closed.createUser('closed-owner');
      const tenant = await createTenant(owner);
      const invited = freshEmail('invited-closed');
      await inviteEmail(owner, tenant.id, invited, 'member');
      await closed.call('/v1/sessions/email', { method: 'POST', json: { email: invited } });
      await closed.call('/v1/sessions/email', { method: 'POST', json: { email: owner.email } });
      while ((await closed.mailSender!.runOnce()) > 0);
      expect(closedBox.messages().some((message) => message.to === invited && /sign-in/.test(message.subject))).toBe(
        false,
      );
      expect(closedBox.messages().some((message) => message.to === owner.email)).toBe(true);
    } finally {
      await open.close();
      await closed.close();
    }
  });

  test('over HTTPS the cookie is __Host- prefixed and Secure; a plain-HTTP cookie is not read there', async () => {
    const box = new DevMailbox(silentLogger(), EVERY_EMAIL);
    const https = await startTestServer({ mail: { transport: box, manual: true }, publicUrl: 'https://works.example' });
    const proxied = await startTestServer({ trustProxy: ['loopback'] });
    try {
      const user = await https.createUser('secure');
      await https.call('/v1/sessions/email', { method: 'POST', json: { email: user.email } });
      while ((await https.mailSender!.runOnce()) > 0);
      const token = /#token=([A-Za-z0-9_-]{43})/.exec(
        box.messages().find((message) => message.to === user.email)!.text,
      )![1];
      const res = await https.call('/v1/sessions', { method: 'POST', json: { token } });
      const cookie = cookieOf(res);
      expect(cookie.pair).toMatch(/^__Host-works_session=ws_/);
      expect(cookie.attributes).toBe('Path=/; HttpOnly; Secure; SameSite=Lax; Max-Age=2592000');
      expect((await https.call('/v1/me', { headers: { cookie: cookie.pair } })).status).toBe(200);
      // The same value under the plain name is not the session's over HTTPS (anyone on the path could plant it).
      await expectProblem(
        await https.call('/v1/me', { headers: { cookie: `works_session=${cookie.value}` } }),
        401,
        'unauthenticated',
      );
      // Behind a proxy TRUST_PROXY names, X-Forwarded-Proto: https is HTTPS: the __Host- cookie is read (and
      // cleared with Secure); without it, the request is plain HTTP and that cookie is not looked at.
      const hostCookie = { cookie: `__Host-works_session=ws_${'y'.repeat(43)}` };
      const viaProxy = await proxied.call('/v1/me', { headers: { ...hostCookie, 'x-forwarded-proto': 'https' } });
      expect((await expectProblem(viaProxy, 401, 'unauthenticated')).detail).toMatch(/another deployment/);
      expect(viaProxy.headers.getSetCookie()[0]).toBe(
        '__Host-works_session=; Path=/; HttpOnly; Secure; SameSite=Lax; Max-Age=0',
      );
      const plain = await proxied.call('/v1/me', { headers: hostCookie });
      expect((await expectProblem(plain, 401, 'unauthenticated')).detail).toMatch(/API key/);
    } finally {
      await https.close();
      await proxied.close();
    }
  });

  test('sign-in requests per client address are limited (SIGN_IN_REQUESTS_PER_CLIENT_PER_HOUR)', async () => {
    const limited = await startTestServer({ sessions: { requestsPerClientPerHour: 3 } });
    try {
      for (let i = 0; i < 3; i++)
        expect(
          (await limited.call('/v1/sessions/email', { method: 'POST', json: { email: freshEmail() } })).status,
        ).toBe(202);
      const refused = await limited.call('/v1/sessions', { method: 'POST', json: { token: 'A'.repeat(43) } });
      await expectProblem(refused, 429, 'rate_limited');
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    } finally {
      await limited.close();
    }
  });
});

describe('cleanup', () => {
  test('the session janitor deletes ended sessions and day-old sign-ins, and keeps live ones', async () => {
    const user = await server.createUser('janitor');
    const live = await signedIn(user.email);
    const ended = await signedIn(user.email);
    await sendStatement(
      server.database,
      `UPDATE sessions SET expires_at = now() - interval '1 second' WHERE token_hash = encode(sha256(convert_to(:value, 'UTF8')), 'hex')`,
      {
        value: ended.split('=')[1],
      },
    );
    await sendStatement(
      server.database,
      `UPDATE sign_in_links SET created_at = now() - interval '25 hours' WHERE email = :email`,
      { email: user.email },
    );
    const janitor = startSessionJanitor(server.database, silentLogger(), 86_400_000);
    await janitor.stop();
    const count = async (sql: string) =>
      (await sendStatement<{ n: number }>(server.database, sql, { email: user.email }))[0]!.n;
    expect(
      await count(`SELECT count(*)::int AS n FROM sessions s JOIN users u ON u.id = s.user_id WHERE u.email = :email`),
    ).toBe(1);
    expect(await count(`SELECT count(*)::int AS n FROM sign_in_links WHERE email = :email`)).toBe(0);
    expect((await server.call('/v1/me', { headers: { cookie: live } })).status).toBe(200);
  });
});
