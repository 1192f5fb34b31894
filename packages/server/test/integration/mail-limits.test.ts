import { randomUUID } from 'node:crypto';
import { takeMailAllowance } from '@works-api/prisma';
import { DEFAULT_LIMITS } from '../../src/domain/limits';
import { mailCapRefusal, secondsUntilNextUtcDay } from '../../src/mail/caps';
import { createTenant, createWork, freshEmail } from '../support/fixtures';
import { inviteEmail } from '../support/roles';
import { startTestServer, type TestServer, type TestUser } from '../support/server';

/**
 * Email bombing: a member cannot make the service mail one address (or anyone) without end. A resend waits
 * RESEND_COOLDOWN after the last one and stops at MAX_RESENDS_PER_REQUEST; every email a tenant queues (a request,
 * a resend, an invitation) counts, as it is queued, against a daily cap per address and a daily budget of the
 * tenant, answered 429 with Retry-After (the next UTC day) and a code of its own, with nothing created. The caps
 * here are small; the time that passes is moved in the database (the counters' day, the last resend).
 */

const LIMITS = {
  resendCooldownMs: 10 * 60_000,
  resendsPerRequest: 2,
  emailsPerRecipientPerDay: 4,
  emailsPerTenantPerDay: 6,
};

let server: TestServer;
let ada: TestUser;

beforeAll(async () => {
  server = await startTestServer({ limits: LIMITS });
  ada = await server.createUser('ada');
});
afterAll(() => server.close());

const db = () => server.database.prisma;

/** A tenant of its own (the caps are per tenant) with one work. */
async function freshWork() {
  const tenant = await createTenant(ada, 'Capped mail');
  const work = await createWork(ada, tenant.id);
  return { tenantId: tenant.id, workId: work.id, url: `/v1/tenants/${tenant.id}/works/${work.id}/requests` as const };
}

const send = <Url extends string>(url: Url, email: string) =>
  server.callAs(ada, 'POST', url, { title: 'Confirm the figures', recipient: { email } });

/** Moves the tenant's email counters to the day before, as the next UTC day would find them. */
async function nextDay(tenantId: string): Promise<void> {
  await db().$executeRaw`UPDATE mail_recipients SET day = day - 1 WHERE tenant_id = ${tenantId}::uuid`;
  await db().$executeRaw`UPDATE tenant_mail_days SET day = day - 1 WHERE tenant_id = ${tenantId}::uuid`;
}

function expectRetryAfterUntilTomorrow(headers: Headers): void {
  const retryAfter = Number(headers.get('retry-after'));
  const expected = secondsUntilNextUtcDay(new Date());
  expect(retryAfter).toBeGreaterThanOrEqual(expected - 5);
  expect(retryAfter).toBeLessThanOrEqual(expected + 1);
}

describe('POST .../resend', () => {
  it('waits RESEND_COOLDOWN after a resend (429 resend_too_soon, Retry-After), and stops at MAX_RESENDS_PER_REQUEST (409)', async () => {
    const { url } = await freshWork();
    const created = await send(url, freshEmail('resent'));
    const resendUrl = `${url}/${created.body.request.id}/resend`;
    const mails = () => db().mailMessage.count({ where: { requestId: created.body.request.id } });

    expect((await server.callAs(ada, 'POST', resendUrl)).status).toBe(200);
    const tooSoon = await server.callAs(ada, 'POST', resendUrl);
    expect([tooSoon.status, tooSoon.body.code]).toEqual([429, 'resend_too_soon']);
    expect(tooSoon.body.detail).toBe('This request was resent less than 10 minutes ago; retry after Retry-After.');
    const retryAfter = Number(tooSoon.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(590);
    expect(retryAfter).toBeLessThanOrEqual(600);
    // Nothing changed: no email queued, no link revoked.
    expect(await mails()).toBe(2);
    const row = await db().request.findUniqueOrThrow({ where: { id: created.body.request.id } });
    expect([row.linkGeneration, row.resendCount]).toEqual([1, 1]);

    // Ten minutes later, the second resend goes; then none any more.
    await db().request.update({ where: { id: row.id }, data: { lastResentAt: new Date(Date.now() - 601_000) } });
    expect((await server.callAs(ada, 'POST', resendUrl)).status).toBe(200);
    await db().request.update({ where: { id: row.id }, data: { lastResentAt: new Date(Date.now() - 601_000) } });
    const over = await server.callAs(ada, 'POST', resendUrl);
    expect([over.status, over.body.code, over.body.detail]).toEqual([
      409,
      'resend_limit_reached',
      'This request was resent 2 times, the most allowed.',
    ]);
    expect(await mails()).toBe(3);
  });

  it('lets only one of concurrent resends through the cooldown', async () => {
    const { url } = await freshWork();
    const created = await send(url, freshEmail('raced'));
    const resendUrl = `${url}/${created.body.request.id}/resend`;
    const statuses = await Promise.all([0, 1, 2].map(() => server.callAs(ada, 'POST', resendUrl)));
    expect(statuses.map((res) => res.status).sort()).toEqual([200, 429, 429]);
    expect(await db().mailMessage.count({ where: { requestId: created.body.request.id } })).toBe(2);
  });
});

describe('the daily email caps', () => {
  it(`refuses a ${LIMITS.emailsPerRecipientPerDay + 1}th email to one address in a day: 429 recipient_email_limit_reached, nothing created`, async () => {
    const { tenantId, workId, url } = await freshWork();
    const email = freshEmail('bombed');
    for (let i = 0; i < LIMITS.emailsPerRecipientPerDay; i++) expect((await send(url, email)).status).toBe(201);
    const refused = await send(url, email.toUpperCase());
    expect([refused.status, refused.body.code]).toEqual([429, 'recipient_email_limit_reached']);
    expect(refused.body.detail).toBe(
      'This tenant has sent 4 emails to this address today, the most allowed; retry after Retry-After.',
    );
    expectRetryAfterUntilTomorrow(refused.headers);
    expect(await db().request.count({ where: { workId } })).toBe(LIMITS.emailsPerRecipientPerDay);
    // A resend of one of them is an email to that address too.
    const [first] = await db().request.findMany({ where: { workId }, take: 1 });
    const resend = await server.callAs(ada, 'POST', `${url}/${first!.id}/resend`);
    expect([resend.status, resend.body.code]).toEqual([429, 'recipient_email_limit_reached']);
    // Another address of the same tenant is not affected; the next day the address takes emails again.
    expect((await send(url, freshEmail('other'))).status).toBe(201);
    await nextDay(tenantId);
    expect((await send(url, email)).status).toBe(201);
  });

  it(`refuses the tenant's ${LIMITS.emailsPerTenantPerDay + 1}th email of the day: 429 tenant_email_budget_exhausted; other tenants go on`, async () => {
    const { tenantId, workId, url } = await freshWork();
    for (let i = 0; i < LIMITS.emailsPerTenantPerDay; i++)
      expect((await send(url, freshEmail('many'))).status).toBe(201);
    const refused = await send(url, freshEmail('one-more'));
    expect([refused.status, refused.body.code]).toEqual([429, 'tenant_email_budget_exhausted']);
    expect(refused.body.detail).toBe('This tenant has sent 6 emails today, the most allowed; retry after Retry-After.');
    expectRetryAfterUntilTomorrow(refused.headers);
    expect(await db().request.count({ where: { workId } })).toBe(LIMITS.emailsPerTenantPerDay);
    // The refused email left no count behind: the address it was for has none.
    expect(await db().mailRecipient.findMany({ where: { tenantId, sent: { gt: 1 } } })).toEqual([]);
    const other = await freshWork();
    expect((await send(other.url, freshEmail('elsewhere'))).status).toBe(201);
    await nextDay(tenantId);
    expect((await send(url, freshEmail('tomorrow'))).status).toBe(201);
  });

  it('counts an invitation email when it is sent, not as a pending row: invite and withdraw in a loop stops at the cap', async () => {
    const tenant = await createTenant(ada, 'Invite loop');
    const email = freshEmail('looped');
    for (let i = 0; i < LIMITS.emailsPerRecipientPerDay; i++) {
      const invitation = await inviteEmail(ada, tenant.id, email, 'member');
      expect((await server.callAs(ada, 'DELETE', `/v1/tenants/${tenant.id}/invitations/${invitation.id}`)).status).toBe(
        204,
      );
    }
    const refused = await server.callAs(ada, 'POST', `/v1/tenants/${tenant.id}/members`, { email, role: 'member' });
    expect([refused.status, refused.body.code]).toEqual([429, 'recipient_email_limit_reached']);
    expectRetryAfterUntilTomorrow(refused.headers);
    expect(await db().invitation.count({ where: { tenantId: tenant.id } })).toBe(0);
    expect(await db().mailMessage.count({ where: { tenantId: tenant.id, kind: 'invitation' } })).toBe(
      LIMITS.emailsPerRecipientPerDay,
    );
  });

  it('holds under concurrent sends to one address: exactly the cap gets through', async () => {
    const { workId, url } = await freshWork();
    const email = freshEmail('concurrent');
    const answers = await Promise.all(Array.from({ length: 10 }, () => send(url, email)));
    const statuses = answers.map((res) => res.status);
    expect(statuses.filter((status) => status === 201)).toHaveLength(LIMITS.emailsPerRecipientPerDay);
    expect(statuses.filter((status) => status === 429)).toHaveLength(10 - LIMITS.emailsPerRecipientPerDay);
    expect(await db().request.count({ where: { workId } })).toBe(LIMITS.emailsPerRecipientPerDay);
    const created = answers.flatMap((res) => (res.body.request ? [res.body.request] : []));
    expect(created.every((request) => request.emailsStopped === false)).toBe(true);
  });

  it.each(['tenant', 'sender'] as const)(
    'keeps a large %s budget exact: its striped count takes concurrent emails, and exactly the budget gets through',
    async (budgetOf) => {
      // Far from the budget, an email counts in its session's slot; near it (the last 2 × max_connections), the
      // tenant's (or the sending user's) emails go one at a time. A budget a little over that margin takes both
      // ways, here through the function itself; the user's emails go to tenants of their own, one per 10 emails.
      const { tenantId } = await freshWork();
      const sender = await server.createUser(`budget-${budgetOf}`);
      const [{ sessions }] = await db().$queryRaw<
        [{ sessions: number }]
      >`SELECT current_setting('max_connections')::int AS sessions`;
      const budget = 2 * sessions + 30;
      const tenants =
        budgetOf === 'tenant'
          ? [tenantId]
          : await Promise.all(
              Array.from({ length: Math.ceil((budget + 20) / 10) }, async () => (await freshWork()).tenantId),
            );
      const day = new Date().toISOString().slice(0, 10);
      const [perTenant, perSender] = budgetOf === 'tenant' ? [budget, 1_000_000] : [1_000_000, budget];
      const take = async (i: number) => {
        try {
          await db().$queryRaw`SELECT take_mail_allowance(${tenants[Math.floor(i / 10) % tenants.length]}::uuid,
            ${sender.id}::uuid, ${`budget-${budgetOf}-${i}@example.com`}::text, ${day}::date, ${randomUUID()}::uuid, 5,
            ${perTenant}::int, 5, ${perSender}::int, true)`;
          return 'taken';
        } catch (error) {
          const refusal = budgetOf === 'tenant' ? 'tenant_email_budget_exhausted' : 'sender_email_budget_exhausted';
          return String(error).includes(refusal) ? 'refused' : String(error);
        }
      };
      const outcomes: string[] = [];
      for (let i = 0; i < budget + 20; i += 10)
        outcomes.push(...(await Promise.all(Array.from({ length: 10 }, (_, j) => take(i + j)))));
      expect(outcomes.filter((o) => o === 'taken')).toHaveLength(budget);
      expect(outcomes.filter((o) => o !== 'taken' && o !== 'refused')).toEqual([]);
      const [{ sent }] =
        budgetOf === 'tenant'
          ? await db().$queryRaw<[{ sent: number }]>`
              SELECT sum(sent)::int AS sent FROM tenant_mail_days WHERE tenant_id = ${tenantId}::uuid`
          : await db().$queryRaw<[{ sent: number }]>`
              SELECT sum(sent)::int AS sent FROM user_mail_days WHERE user_id = ${sender.id}::uuid`;
      expect(sent).toBe(budget);
    },
  );
});

/**
 * Issue 42, finding 1: one account flooded one mailbox through many tenants and address variants, since the caps
 * counted per tenant and exact address. Now every email also counts for its address across the whole service, in a
 * canonical form, and for the user who caused it across every tenant of theirs. A server of its own with small caps
 * (the same database): per tenant and address 3, per address across the service 5, per sending user 8.
 */
describe('the caps across tenants and address variants', () => {
  const ACROSS = {
    emailsPerRecipientPerDay: 3,
    emailsPerTenantPerDay: 100,
    emailsPerAddressPerDay: 5,
    emailsPerSenderPerDay: 8,
  };
  let across: TestServer;
  let eve: TestUser;
  let bob: TestUser;

  beforeAll(async () => {
    across = await startTestServer({ limits: { ...LIMITS, ...ACROSS } });
    eve = await across.createUser('eve');
    bob = await across.createUser('bob');
  });
  afterAll(() => across.close());

  async function workOf(user: TestUser, name: string) {
    const tenant = await createTenant(user, name);
    const work = await createWork(user, tenant.id);
    return { tenantId: tenant.id, url: `/v1/tenants/${tenant.id}/works/${work.id}/requests` as const };
  }
  const sendAs = <Url extends string>(user: TestUser, url: Url, email: string) =>
    across.callAs(user, 'POST', url, { title: 'Confirm the figures', recipient: { email } });
  const requestsTo = (canonical: string) =>
    db().request.count({ where: { recipientEmail: { endsWith: canonical.split('@')[1]! } } });

  it('compares addresses in a canonical form: lower case, no +tag, no dots at Gmail; nothing else', async () => {
    const cases: Array<[string, string]> = [
      ['Victim+1@Example.ORG', 'victim@example.org'],
      ['victim+a+b@example.org', 'victim@example.org'],
      ['v.ic.tim+news@GoogleMail.com', 'victim@gmail.com'],
      ['V.ictim@gmail.com', 'victim@gmail.com'],
      // Dots elsewhere, a -tag, sub-domains: possibly other mailboxes, left as they are.
      ['first.last@example.org', 'first.last@example.org'],
      ['first-last@example.org', 'first-last@example.org'],
      ['victim@mail.example.org', 'victim@mail.example.org'],
      // A name that is only a tag keeps it; an IDN domain arrives as its A-label, compared as is; a trailing dot goes.
      ['+only@example.org', '+only@example.org'],
      ['anna@xn--bcher-kva.example', 'anna@xn--bcher-kva.example'],
      ['victim@example.org.', 'victim@example.org'],
    ];
    const rows = await db().$queryRaw<Array<{ canonical: string }>>`
      SELECT canonical_email(e) AS canonical FROM unnest(${cases.map(([raw]) => raw)}::text[]) WITH ORDINALITY AS t(e, n)
      ORDER BY n`;
    expect(rows.map((row) => row.canonical)).toEqual(cases.map(([, canonical]) => canonical));
  });

  it(`refuses the ${ACROSS.emailsPerAddressPerDay + 1}th email of the day to one address from any tenant, in any of its forms: 429 address_email_limit_reached`, async () => {
    const domain = `victim-${randomUUID().slice(0, 8)}.example`;
    const victim = `victim@${domain}`;
    const first = await workOf(eve, 'Flooder one');
    for (let i = 0; i < ACROSS.emailsPerRecipientPerDay; i++)
      expect((await sendAs(eve, first.url, victim)).status).toBe(201);
    // The tenant's own cap counts the variants as the address.
    const variant = await sendAs(eve, first.url, `Victim+${ACROSS.emailsPerRecipientPerDay}@${domain}`);
    expect([variant.status, variant.body.code]).toEqual([429, 'recipient_email_limit_reached']);
    // A second tenant of the same user, and another user's tenant, take the address up to the service's cap...
    const second = await workOf(eve, 'Flooder two');
    expect((await sendAs(eve, second.url, `victim+1@${domain}`)).status).toBe(201);
    const bobs = await workOf(bob, 'Someone else');
    expect((await sendAs(bob, bobs.url, `VICTIM+2@${domain}`)).status).toBe(201);
    expect(await requestsTo(victim)).toBe(ACROSS.emailsPerAddressPerDay);
    // ...and not one more, whoever sends it and however it is written.
    for (const [user, url, email] of [
      [eve, second.url, `victim+3@${domain}`],
      [bob, bobs.url, victim],
      [bob, bobs.url, `victim+other@${domain.toUpperCase()}`],
    ] as const) {
      const refused = await sendAs(user, url, email);
      expect([email, refused.status, refused.body.code]).toEqual([email, 429, 'address_email_limit_reached']);
      expect(refused.body.detail).toBe(
        'This address has been sent 5 emails by this service today (from every tenant, in any of its forms), the most allowed; retry after Retry-After.',
      );
      expectRetryAfterUntilTomorrow(refused.headers);
    }
    expect(await requestsTo(victim)).toBe(ACROSS.emailsPerAddressPerDay);
    // An invitation to a variant is refused the same way, and creates nothing.
    const invited = await across.callAs(bob, 'POST', `/v1/tenants/${(await workOf(bob, 'Inviter')).tenantId}/members`, {
      email: `victim+join@${domain}`,
      role: 'member',
    });
    expect([invited.status, invited.body.code]).toEqual([429, 'address_email_limit_reached']);
    expect(await db().invitation.count({ where: { email: { endsWith: domain } } })).toBe(0);
    // One row for the address, counted to the cap; the next UTC day it takes emails again.
    expect(await db().mailAddress.findUnique({ where: { email: victim } })).toMatchObject({ sent: 5 });
    await db().$executeRaw`UPDATE mail_addresses SET day = day - 1 WHERE email = ${victim}`;
    expect((await sendAs(bob, bobs.url, `victim+tomorrow@${domain}`)).status).toBe(201);
  });

  it(`refuses a user's ${ACROSS.emailsPerSenderPerDay + 1}th email of the day in a second tenant of theirs: 429 sender_email_budget_exhausted`, async () => {
    const carol = await across.createUser('carol');
    const first = await workOf(carol, 'Carol one');
    const second = await workOf(carol, 'Carol two');
    const half = ACROSS.emailsPerSenderPerDay / 2;
    for (let i = 0; i < half; i++) expect((await sendAs(carol, first.url, freshEmail('spread'))).status).toBe(201);
    for (let i = 0; i < half; i++) expect((await sendAs(carol, second.url, freshEmail('spread'))).status).toBe(201);
    // Each tenant is far from its own budget (100), every address far from its caps: the user's budget says no.
    const third = await workOf(carol, 'Carol three');
    for (const url of [second.url, third.url]) {
      const refused = await sendAs(carol, url, freshEmail('one-more'));
      expect([refused.status, refused.body.code]).toEqual([429, 'sender_email_budget_exhausted']);
      expect(refused.body.detail).toBe(
        'You have caused 8 emails today (in all your tenants), the most allowed; retry after Retry-After.',
      );
      expectRetryAfterUntilTomorrow(refused.headers);
    }
    // Her invitations and resends are emails she causes too.
    const invited = await across.callAs(carol, 'POST', `/v1/tenants/${third.tenantId}/members`, {
      email: freshEmail('invited'),
      role: 'member',
    });
    expect([invited.status, invited.body.code]).toEqual([429, 'sender_email_budget_exhausted']);
    const [sent] = await db().request.findMany({ where: { tenantId: first.tenantId }, take: 1 });
    const resent = await across.callAs(carol, 'POST', `${first.url}/${sent!.id}/resend`);
    expect([resent.status, resent.body.code]).toEqual([429, 'sender_email_budget_exhausted']);
    // Another member of her tenant sends on his own budget; the resend of her request counts as his.
    await db().membership.create({
      data: { id: randomUUID(), tenantId: first.tenantId, userId: bob.id, role: 'member' },
    });
    expect((await sendAs(bob, first.url, freshEmail('bob'))).status).toBe(201);
    expect((await across.callAs(bob, 'POST', `${first.url}/${sent!.id}/resend`)).status).toBe(200);
    const [{ sent: counted }] = await db().$queryRaw<[{ sent: number }]>`
      SELECT sum(sent)::int AS sent FROM user_mail_days WHERE user_id = ${carol.id}::uuid`;
    expect(counted).toBe(ACROSS.emailsPerSenderPerDay);
    // The next UTC day she sends again.
    await db().$executeRaw`UPDATE user_mail_days SET day = day - 1 WHERE user_id = ${carol.id}::uuid`;
    expect((await sendAs(carol, third.url, freshEmail('tomorrow'))).status).toBe(201);
  });

  it('lets a sign-in link through a service-wide stop, counted under the address cap (the allowance for other email kinds)', async () => {
    const email = `signin-${randomUUID().slice(0, 8)}@example.org`;
    await db()
      .$executeRaw`INSERT INTO mail_addresses (email, day, sent, stopped_at) VALUES (${email}, current_date, 0, now())`;
    const caps = { ...DEFAULT_LIMITS, emailsPerAddressPerDay: 2 };
    const database = across.database;
    // A tenant's email is stopped (nothing counted); the address's own sign-in links go, up to the cap.
    const tenant = await workOf(eve, 'Stopped everywhere');
    const member = { kind: 'tenant', tenantId: tenant.tenantId, senderId: eve.id, email } as const;
    expect(await takeMailAllowance(database, member, caps)).toBe(true);
    const signIn = { kind: 'asked-by-address', email: email.replace('@', '+x@') } as const;
    expect(await takeMailAllowance(database, signIn, caps)).toBe(false);
    expect(await takeMailAllowance(database, signIn, caps)).toBe(false);
    const refused = await takeMailAllowance(database, signIn, caps).catch((error: unknown) => error);
    expect(mailCapRefusal(refused, caps)?.code).toBe('address_email_limit_reached');
    expect(await db().mailAddress.findUnique({ where: { email } })).toMatchObject({ sent: 2 });
  });
});
