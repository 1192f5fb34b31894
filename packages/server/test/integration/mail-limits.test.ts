import { randomUUID } from 'node:crypto';
import { secondsUntilNextUtcDay } from '../../src/mail/caps';
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

  it('keeps a large tenant budget exact: its striped count takes concurrent emails, and exactly the budget gets through', async () => {
    // Far from the budget, an email counts in its session's slot; near it (the last 2 × max_connections), the tenant's
    // emails go one at a time. A budget a little over that margin takes both ways, here through the function itself.
    const { tenantId } = await freshWork();
    const [{ sessions }] = await db().$queryRaw<
      [{ sessions: number }]
    >`SELECT current_setting('max_connections')::int AS sessions`;
    const budget = 2 * sessions + 30;
    const take = async (i: number) => {
      try {
        await db().$queryRaw`SELECT take_mail_allowance(${tenantId}::uuid, ${`budget-${i}@example.com`}::text,
          ${new Date().toISOString().slice(0, 10)}::date, ${randomUUID()}::uuid, 5, ${budget}::int)`;
        return 'taken';
      } catch (error) {
        return String(error).includes('tenant_email_budget_exhausted') ? 'refused' : String(error);
      }
    };
    const outcomes: string[] = [];
    for (let i = 0; i < budget + 20; i += 10)
      outcomes.push(...(await Promise.all(Array.from({ length: 10 }, (_, j) => take(i + j)))));
    expect(outcomes.filter((o) => o === 'taken')).toHaveLength(budget);
    expect(outcomes.filter((o) => o !== 'taken' && o !== 'refused')).toEqual([]);
    const [{ sent }] = await db().$queryRaw<
      [{ sent: number }]
    >`SELECT sum(sent)::int AS sent FROM tenant_mail_days WHERE tenant_id = ${tenantId}::uuid`;
    expect(sent).toBe(budget);
  });
});
