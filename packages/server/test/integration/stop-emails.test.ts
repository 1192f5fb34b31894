import { randomUUID } from 'node:crypto';
import { secretBoxOf } from '@works-api/prisma';
import { stopLinkToken } from '../../src/domain/recipients/stop-links';
import { DevMailbox, type DevMail } from '../../src/mail/transport';
import { silentLogger } from '../../src/observability/logger';
import { createTenant, createWork, freshEmail } from '../support/fixtures';
import { inviteEmail } from '../support/roles';
import { startTestServer, type TestServer, type TestUser } from '../support/server';

/**
 * The phishing relay: our emails say in our words who wrote and from which tenant, and every one of them carries a
 * link (and a List-Unsubscribe header) that stops that tenant's emails to that address, with no account. Stopped,
 * the tenant's requests to the address are created without an email and say so; what was queued is dropped; the
 * same page turns the emails back on. The mail sender runs by hand here (runOnce), into a dev mailbox.
 */
let server: TestServer;
let ada: TestUser;
const mailbox = new DevMailbox(silentLogger(), 1000);

beforeAll(async () => {
  server = await startTestServer({
    mail: { transport: mailbox, manual: true, publicUrl: 'http://works.test' },
    recipientRateLimit: { perTokenPerMinute: 1000, perAddressPerMinute: 1000 },
  });
  ada = await server.createUser('ada');
});
afterAll(() => server.close());

const db = () => server.database.prisma;

async function freshWork(name = 'Acme Research') {
  const tenant = await createTenant(ada, name);
  const work = await createWork(ada, tenant.id, 'Annual report 2026');
  return { tenantId: tenant.id, url: `/v1/tenants/${tenant.id}/works/${work.id}/requests` as const };
}

const send = <Url extends string>(url: Url, email: string, title = 'Confirm the figures') =>
  server.callAs(ada, 'POST', url, { title, recipient: { email, firstName: 'Grace' } });

/** Every email queued so far is sent (or dropped); returns those the mailbox got for `email` now. */
async function deliver(email: string): Promise<DevMail[]> {
  const before = mailbox.messages().length;
  while ((await server.mailSender!.runOnce()) > 0);
  return mailbox
    .messages()
    .slice(0, mailbox.messages().length - before)
    .filter((mail) => mail.to === email.toLowerCase());
}

const stopPathOf = (mail: DevMail): string => {
  const link = /http:\/\/works\.test(\/stop\/[A-Za-z0-9_-]{43})\b/.exec(mail.text)?.[1];
  if (!link) throw new Error(`no stop link in: ${mail.text}`);
  return link;
};

const page = (path: string, init: RequestInit = {}) => fetch(server.baseUrl + path, init);
const post = (path: string, body: string) =>
  page(path, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body });

describe('every email', () => {
  it('says who wrote it and from which tenant in our words, quotes the title, and carries the stop link', async () => {
    const { tenantId, url } = await freshWork('Acme Research');
    const email = freshEmail('grace');
    await send(url, email, 'Your password expires today: log in at evil.example');
    const [request] = await deliver(email);
    expect(request!.subject).toBe('ada Tester of "Acme Research" sent you a request');
    expect(request!.text).toContain('> Your password expires today: log in at evil.example');
    expect(request!.headers).toMatchObject({
      'List-Unsubscribe': `<http://works.test${stopPathOf(request!)}>`,
      'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
    });
    // An invitation from that tenant to that address carries the same link.
    await inviteEmail(ada, tenantId, email, 'member');
    const [invitation] = await deliver(email);
    expect(invitation!.subject).toBe('ada Tester invited you to join "Acme Research" on works-api');
    expect(stopPathOf(invitation!)).toBe(stopPathOf(request!));
  });
});

describe('the stop link', () => {
  it('shows what it does on GET without stopping anything; a POST stops; requests are then created without an email, and say so', async () => {
    const { url } = await freshWork('Stopped Ltd');
    const email = freshEmail('stopper');
    await send(url, email);
    const path = stopPathOf((await deliver(email))[0]!);

    const shown = await page(path);
    expect(shown.status).toBe(200);
    expect(shown.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(shown.headers.get('cache-control')).toBe('no-store');
    const html = await shown.text();
    expect(html).toContain('Stop emails from &quot;Stopped Ltd&quot;');
    expect(html).toContain(email.toLowerCase());
    // A GET (a mail scanner, a preview) stops nothing.
    await send(url, email);
    expect(await deliver(email)).toHaveLength(1);

    const stopped = await post(path, 'action=stop');
    expect(stopped.status).toBe(200);
    expect(await stopped.text()).toContain('sends no more emails to');
    const created = await send(url, email);
    expect(created.status).toBe(201);
    expect(created.body.request).toMatchObject({
      emailsStopped: true,
      emailDelivery: {
        status: 'dropped',
        lastSentAt: null,
        failure: 'The recipient has stopped emails from this tenant.',
      },
    });
    const id = created.body.request.id;
    expect(await db().mailMessage.count({ where: { requestId: id } })).toBe(0);
    expect(await deliver(email)).toEqual([]);
    // A read and the webhook event say the same.
    expect((await server.callAs(ada, 'GET', `${url}/${id}`)).body.request).toMatchObject({ emailsStopped: true });
    const event = await db().webhookEvent.findFirstOrThrow({ where: { orderingKey: id, type: 'request.created' } });
    expect(JSON.parse(event.body).data.request.emailsStopped).toBe(true);
    // A resend sends nothing and changes nothing.
    const resent = await server.callAs(ada, 'POST', `${url}/${id}/resend`);
    expect([resent.status, resent.body.request?.emailsStopped]).toEqual([200, true]);
    expect(await db().mailMessage.count({ where: { requestId: id } })).toBe(0);
    expect((await db().request.findUniqueOrThrow({ where: { id } })).linkGeneration).toBe(0);
  });

  it("stops only that tenant's emails: another tenant's request to the address is emailed", async () => {
    const first = await freshWork('First Co');
    const second = await freshWork('Second Co');
    const email = freshEmail('one-tenant');
    await send(first.url, email);
    expect((await post(stopPathOf((await deliver(email))[0]!), 'action=stop')).status).toBe(200);
    expect((await send(second.url, email)).body.request.emailsStopped).toBe(false);
    expect(await deliver(email)).toHaveLength(1);
  });

  it("takes a mail client's one-click POST (List-Unsubscribe=One-Click), and drops what was queued before", async () => {
    const { url } = await freshWork('One Click');
    const email = freshEmail('one-click');
    await send(url, email);
    const path = stopPathOf((await deliver(email))[0]!);
    const queued = await send(url, email); // not sent yet: the sender runs by hand
    expect((await post(path, 'List-Unsubscribe=One-Click')).status).toBe(200);
    expect(await deliver(email)).toEqual([]);
    const request = (await server.callAs(ada, 'GET', `${url}/${queued.body.request.id}`)).body.request;
    expect(request.emailsStopped).toBe(true);
    expect(request.emailDelivery).toMatchObject({ status: 'dropped' });
  });

  it('turns the emails back on (action=resume), and stopping twice changes nothing', async () => {
    const { url } = await freshWork('Resumed Inc');
    const email = freshEmail('resumer');
    await send(url, email);
    const path = stopPathOf((await deliver(email))[0]!);
    expect((await post(path, 'action=stop')).status).toBe(200);
    const stoppedAt = await db().mailRecipient.findFirstOrThrow({ where: { email: email.toLowerCase() } });
    expect((await post(path, 'action=stop')).status).toBe(200);
    expect((await db().mailRecipient.findFirstOrThrow({ where: { email: email.toLowerCase() } })).stoppedAt).toEqual(
      stoppedAt.stoppedAt,
    );
    const resumed = await post(path, 'action=resume');
    expect(await resumed.text()).toContain('may email');
    expect((await send(url, email)).body.request.emailsStopped).toBe(false);
    expect(await deliver(email)).toHaveLength(1);
  });

  it('answers a link we did not make with a 404 page, and changes nothing', async () => {
    const { url } = await freshWork('Forged');
    const email = freshEmail('forged');
    await send(url, email);
    const path = stopPathOf((await deliver(email))[0]!);
    const token = path.slice('/stop/'.length);
    const forged = `${token.slice(0, 30)}${token[30] === 'A' ? 'B' : 'A'}${token.slice(31)}`;
    for (const bad of [forged, 'x'.repeat(43), 'short']) {
      const res = await post(`/stop/${bad}`, 'action=stop');
      expect([bad, res.status]).toEqual([bad, 404]);
      expect(await res.text()).toContain('This link does not work');
      expect((await page(`/stop/${bad}`)).status).toBe(404);
    }
    expect(await db().mailRecipient.count({ where: { email: email.toLowerCase(), stoppedAt: { not: null } } })).toBe(0);
    // The link itself never reaches the log.
    expect(server.rawLogs.join('\n')).not.toContain(token);
  });
});

/**
 * Issue 42, finding 1: a stop held for one tenant and one exact address. Stops now hold for the address in its
 * canonical form (lower case, no `+tag`, Gmail's dots), and the page also stops every email of the service, from
 * every tenant, now and later.
 */
describe('stops across tenants and address variants', () => {
  it("holds a tenant's stop for every form of the address", async () => {
    const { url } = await freshWork('Variant Co');
    const email = freshEmail('variant');
    await send(url, email);
    expect((await post(stopPathOf((await deliver(email))[0]!), 'action=stop')).status).toBe(200);
    for (const variant of [email.replace('@', '+again@'), email.toUpperCase().replace('@', '+X@')]) {
      const created = await send(url, variant);
      expect([variant, created.body.request.emailsStopped]).toEqual([variant, true]);
    }
    expect(await deliver(email.replace('@', '+again@'))).toEqual([]);
  });

  it('offers to stop every email of the service; that stop holds in every tenant, for every kind of email, until resumed', async () => {
    const bob = await server.createUser('bob');
    const first = await freshWork('First Sender');
    const email = freshEmail('everywhere');
    await send(first.url, email);
    const path = stopPathOf((await deliver(email))[0]!);
    // Another user's tenant has an email queued for the address (a variant of it) before the stop.
    const bobTenant = await createTenant(bob, 'Bob Ltd');
    const bobWork = await createWork(bob, bobTenant.id);
    const bobUrl = `/v1/tenants/${bobTenant.id}/works/${bobWork.id}/requests` as const;
    const bobSend = (to: string) =>
      server.callAs(bob, 'POST', bobUrl, { title: 'Confirm the figures', recipient: { email: to } });
    const queued = await bobSend(email.replace('@', '+queued@'));
    expect(queued.body.request.emailsStopped).toBe(false);

    const shown = await (await page(path)).text();
    expect(shown).toContain('Stop every email from works-api');
    expect(shown).toContain('Sign-in links you ask for yourself still come');
    const stopped = await post(path, 'action=stop_all');
    expect(stopped.status).toBe(200);
    const stoppedPage = await stopped.text();
    expect(stoppedPage).toContain('No one on works-api emails');
    expect(stoppedPage).toContain('Receive emails from works-api again');
    // The tenant's own stop is a separate thing: still offered.
    expect(stoppedPage).toContain('Stop emails from &quot;First Sender&quot;');

    // What was queued is dropped; Bob's new requests, his invitations, and the first tenant's are all stopped.
    expect(await deliver(email.replace('@', '+queued@'))).toEqual([]);
    const queuedNow = (await server.callAs(bob, 'GET', `${bobUrl}/${queued.body.request.id}`)).body.request;
    expect([queuedNow.emailsStopped, queuedNow.emailDelivery?.status]).toEqual([true, 'dropped']);
    const later = await bobSend(email.toUpperCase());
    expect(later.body.request).toMatchObject({
      emailsStopped: true,
      emailDelivery: { status: 'dropped', failure: 'The recipient has stopped emails from this tenant.' },
    });
    expect((await send(first.url, email)).body.request.emailsStopped).toBe(true);
    await inviteEmail(bob, bobTenant.id, email.replace('@', '+invite@'), 'member');
    expect(await db().mailMessage.count({ where: { tenantId: bobTenant.id, kind: 'invitation' } })).toBe(0);
    // A resend of the request made before the stop sends nothing either.
    const resent = await server.callAs(bob, 'POST', `${bobUrl}/${queued.body.request.id}/resend`);
    expect([resent.status, resent.body.request.emailsStopped]).toEqual([200, true]);
    expect(await deliver(email)).toEqual([]);
    // Nothing of it counted: the address's service-wide count is the one email sent before the stop, plus Bob's
    // queued one.
    const canonical = email.toLowerCase();
    expect(await db().mailAddress.findUnique({ where: { email: canonical } })).toMatchObject({ sent: 2 });

    const resumed = await post(path, 'action=resume_all');
    expect(await resumed.text()).toContain('Tenants on works-api may email');
    expect((await bobSend(email)).body.request.emailsStopped).toBe(false);
    expect(await deliver(email)).toHaveLength(1);
  });

  it('keeps the links of rows written before addresses were canonical working: they act on the canonical address', async () => {
    const { tenantId, url } = await freshWork('Legacy Links');
    const email = freshEmail('legacy');
    await send(url, email);
    await deliver(email);
    // A row as the migration leaves one it did not keep: the exact address of an old email, with its own id.
    const legacyId = randomUUID();
    const legacyEmail = email.replace('@', '+old@');
    // (Stopped once on its own: what counts now is the canonical row, which is not.)
    await db().$executeRaw`INSERT INTO mail_recipients (tenant_id, email, id, day, sent, stopped_at)
      VALUES (${tenantId}::uuid, ${legacyEmail}, ${legacyId}::uuid, current_date, 1, now())`;
    const legacyPath = `/stop/${stopLinkToken(secretBoxOf(server.database), legacyId)}`;
    const shown = await (await page(legacyPath)).text();
    expect(shown).toContain(email.toLowerCase());
    expect(shown).toContain('Stop emails from &quot;Legacy Links&quot;');
    expect((await post(legacyPath, 'action=stop')).status).toBe(200);
    expect((await send(url, email)).body.request.emailsStopped).toBe(true);
    expect(await (await post(legacyPath, 'action=resume')).text()).toContain('may email');
    expect((await send(url, legacyEmail)).body.request.emailsStopped).toBe(false);
  });
});
