import type { Db } from '@works-api/prisma';
import { MailSender } from '../../src/mail/sender';
import { DevMailbox, type MailTransport, type SendOutcome } from '../../src/mail/transport';
import { silentLogger } from '../../src/observability/logger';
import { createTenant, createWork, freshEmail } from '../support/fixtures';
import { inviteEmail } from '../support/roles';
import { startTestServer, type TestServer, type TestUser } from '../support/server';

/**
 * The mail sender's batch: one statement claims a round's emails, reads what each needs and stores their answer
 * links, and one records the outcomes that are ready together. What goes wrong with some emails of a batch (a
 * stopped address, a cancelled request, a discarded work, a refusal, a temporary failure, an address with no
 * recipient row yet) is decided per email and leaves the others alone. The sender runs by hand (runOnce) on this
 * file's tenants, with a statement counter in front of the database.
 */
let server: TestServer;
let ada: TestUser;
let statements: string[] = [];
const mailbox = new DevMailbox(silentLogger(), 1000);
const refusedTo = new Set<string>();
const laterTo = new Set<string>();

/** The dev mailbox, but refusing some addresses for good and others for now. */
const transport: MailTransport = {
  description: 'dev mailbox with refusals',
  keepsLinks: true,
  send(mail, origin): Promise<SendOutcome> {
    if (refusedTo.has(mail.to)) return Promise.resolve({ ok: false, permanent: true, error: '550 No such user' });
    if (laterTo.has(mail.to)) return Promise.resolve({ ok: false, permanent: false, error: '421 Try again later' });
    return mailbox.send(mail, origin);
  },
  close() {},
};

beforeAll(async () => {
  server = await startTestServer({ recipientRateLimit: { perTokenPerMinute: 1000, perAddressPerMinute: 1000 } });
  ada = await server.createUser('ada');
});
afterAll(() => server.close());

/** A sender of `tenantId`'s emails whose plain statements are counted in `statements`. */
function senderOf(tenantId: string): MailSender {
  const database = server.database;
  const counted: Db = {
    ...database,
    statement: (text, values, prepared) => {
      statements.push(text);
      return database.statement(text, values, prepared);
    },
  };
  return new MailSender({
    db: counted,
    logger: silentLogger(),
    transport,
    from: 'works-api <no-reply@works.test>',
    publicUrl: 'http://works.test',
    reminderBeforeMs: 60_000,
    maxInFlight: 16,
    onlyTenants: () => [tenantId],
  });
}

const sql = <Row>(text: string, ...values: unknown[]) => server.database.prisma.$queryRawUnsafe<Row[]>(text, ...values);

const tokenIn = (text: string): string => /http:\/\/works\.test\/r\/([A-Za-z0-9_-]{43})/.exec(text)![1]!;

describe('a batch of emails', () => {
  it('is claimed, rendered and recorded in a few statements, each email decided on its own', async () => {
    const tenant = await createTenant(ada, 'Batch Co');
    const work = await createWork(ada, tenant.id, 'Batch work');
    const doomed = await createWork(ada, tenant.id, 'Doomed work');
    const requestsOf = (workId: string) => `/v1/tenants/${tenant.id}/works/${workId}/requests`;
    const send = async (workId: string, email: string) => {
      const created = await server.callAs(ada, 'POST', requestsOf(workId), {
        title: 'Confirm the figures',
        recipient: { email, firstName: 'Grace' },
      });
      expect(created.status).toBe(201);
      const { id } = (created.body as { request: { id: string } }).request;
      return { id, email, path: `${requestsOf(workId)}/${id}` };
    };
    const addresses = Object.fromEntries(
      ['sent1', 'sent2', 'cancelled', 'discarded', 'stopped', 'legacy', 'refused', 'later'].map((name) => [
        name,
        freshEmail(name).toLowerCase(),
      ]),
    ) as Record<string, string>;
    const sent1 = await send(work.id, addresses.sent1!);
    const sent2 = await send(work.id, addresses.sent2!);
    const cancelled = await send(work.id, addresses.cancelled!);
    const discarded = await send(doomed.id, addresses.discarded!);
    const stopped = await send(work.id, addresses.stopped!);
    const legacy = await send(work.id, addresses.legacy!);
    const refused = await send(work.id, addresses.refused!);
    const later = await send(work.id, addresses.later!);
    const invited = freshEmail('invited').toLowerCase();
    await inviteEmail(ada, tenant.id, invited, 'member');
    refusedTo.add(refused.email);
    laterTo.add(later.email);
    // After the emails were queued: the request is cancelled, the work discarded, the address stopped (as a stop
    // link does, racing the claim), and one address's recipient row is gone (an email queued before there were any).
    expect((await server.callAs(ada, 'DELETE', `${cancelled.path}/cancel`)).status).toBe(200);
    expect((await server.callAs(ada, 'DELETE', `/v1/tenants/${tenant.id}/works/${doomed.id}`)).status).toBe(200);
    await sql(
      `UPDATE mail_recipients SET stopped_at = now() WHERE tenant_id = $1::uuid AND email = $2`,
      tenant.id,
      stopped.email,
    );
    await sql(`DELETE FROM mail_recipients WHERE tenant_id = $1::uuid AND email = $2`, tenant.id, legacy.email);

    const sender = senderOf(tenant.id);
    const before = mailbox.messages().length;
    statements = [];
    expect(await sender.runOnce()).toBe(9);
    // The reminders' look, the claim, the outcomes ready together; the address without a row takes its own two
    // (its row made, its link stored) and so its outcome may come in a record of its own.
    expect(statements.length).toBeGreaterThanOrEqual(5);
    expect(statements.length).toBeLessThanOrEqual(6);
    await sender.stop(1000);

    const kept = mailbox.messages().slice(0, mailbox.messages().length - before);
    expect(kept.map((mail) => mail.to).sort()).toEqual([sent1.email, sent2.email, legacy.email, invited].sort());
    const read = async (request: { path: string }) =>
      (await server.callAs(ada, 'GET', request.path)).body.request as {
        emailDelivery: { status: string; failure: string | null; lastSentAt: string | null };
        emailsStopped: boolean;
      };
    for (const request of [sent1, sent2, legacy])
      expect((await read(request)).emailDelivery).toMatchObject({ status: 'sent', failure: null });
    for (const request of [cancelled, discarded])
      expect((await read(request)).emailDelivery).toMatchObject({ status: 'dropped', lastSentAt: null });
    expect(await read(stopped)).toMatchObject({
      emailsStopped: true,
      emailDelivery: { status: 'dropped', failure: 'The recipient has stopped emails from this tenant.' },
    });
    expect((await read(refused)).emailDelivery).toMatchObject({ status: 'failed', failure: '550 No such user' });
    // A temporary failure: still queued, due again after the first retry's wait (5 s, where the lease is 60 s),
    // the error kept on the email.
    expect((await read(later)).emailDelivery).toMatchObject({ status: 'queued' });
    const [retried] = await sql<{ status: string; attempts: number; due_later: boolean; last_error: string }>(
      `SELECT status::text, attempts, next_attempt_at BETWEEN now() AND now() + interval '30 seconds' AS due_later, last_error
       FROM mail_outbox WHERE request_id = $1::uuid`,
      later.id,
    );
    expect(retried).toEqual({ status: 'queued', attempts: 1, due_later: true, last_error: '421 Try again later' });

    // Answer links: stored for the emails that were sent or tried, none for those dropped; each sent one works.
    const links = await sql<{ request_id: string; generation: number; dev_mailbox: boolean }>(
      `SELECT request_id::text, generation, dev_mailbox FROM answer_links
       WHERE request_id = ANY ($1::uuid[]) ORDER BY request_id`,
      [sent1, sent2, cancelled, discarded, stopped, legacy, refused, later].map((request) => request.id),
    );
    expect(links.map((link) => link.request_id).sort()).toEqual(
      [sent1, sent2, legacy, refused, later].map((request) => request.id).sort(),
    );
    expect(links.every((link) => link.generation === 0 && link.dev_mailbox)).toBe(true);
    for (const mail of kept.filter((mail) => mail.to !== invited)) {
      const view = await fetch(`${server.baseUrl}/v1/recipient/request`, {
        headers: { Authorization: `Bearer ${tokenIn(mail.text)}` },
      });
      expect([mail.to, view.status]).toEqual([mail.to, 200]);
    }
    // The address that had no row has one again, and its email's stop link names it.
    const [made] = await sql<{ id: string }>(
      `SELECT id::text FROM mail_recipients WHERE tenant_id = $1::uuid AND email = $2`,
      tenant.id,
      legacy.email,
    );
    expect(made).toBeDefined();
    const legacyMail = kept.find((mail) => mail.to === legacy.email)!;
    expect(legacyMail.text).toMatch(/http:\/\/works\.test\/stop\/[A-Za-z0-9_-]{43}/);
    // Nothing is left to send but the email due again later.
    expect(await senderOf(tenant.id).runOnce()).toBe(0);
  });
});
