import { Writable } from 'node:stream';
import { createClient } from '@works-api/client';
import { formatDue } from '../../src/mail/render';
import { type DevMail, DevMailbox, smtpTransport } from '../../src/mail/transport';
import { createLogger } from '../../src/observability/logger';
import { silentLogger } from '../../src/observability/logger';
import { createTenant, createWork, freshEmail, ok } from '../support/fixtures';
import { daysFromNow } from '../support/clock';
import { eventually } from '../support/load';
import { type SmtpSink, startSmtpSink } from '../support/smtp-sink';
import { addMember } from '../support/roles';
import { startTestServer, type TestServer, type TestUser } from '../support/server';

/**
 * A request reaches its recipient: the app's mail sender sends through a real SMTP server on loopback (the sink),
 * the recipient opens the emailed link and answers, and members see it all.
 */
let server: TestServer;
let owner: TestUser;
let sink: SmtpSink;
const tenants: string[] = [];

beforeAll(async () => {
  sink = await startSmtpSink();
  server = await startTestServer({
    mail: { transport: smtpTransport(sink.url), onlyTenants: () => tenants },
    recipientRateLimit: { perTokenPerMinute: 1000, perAddressPerMinute: 1000 },
  });
  owner = await server.createUser('sender');
});
afterAll(async () => {
  await server.close();
  await sink.close();
});

async function newWork(name = 'Annual report 2026') {
  const tenant = await createTenant(owner, 'Mail Inc');
  tenants.push(tenant.id);
  const work = await createWork(owner, tenant.id, name);
  return { tenantId: tenant.id, workId: work.id };
}

async function send(
  where: { tenantId: string; workId: string },
  body: { title?: string; message?: string; dueAt?: string } = {},
  email = freshEmail('rcpt'),
) {
  const { request } = ok(
    await owner.client.POST('/tenants/{tenant_id}/works/{work_id}/requests', {
      params: { path: { tenant_id: where.tenantId, work_id: where.workId } },
      body: {
        title: body.title ?? 'Confirm Q3 figures',
        message: body.message ?? 'Please confirm the figures in section 3.',
        recipient: { email, firstName: 'Grace', lastName: 'Hopper' },
        ...(body.dueAt && { dueAt: body.dueAt }),
      },
    }),
  );
  return { request, email, path: { tenant_id: where.tenantId, work_id: where.workId, id: request.id } };
}

/** The messages the sink got for one address, once there are `count` of them. */
function mailTo(email: string, count = 1) {
  return eventually(
    () => {
      const mine = sink.received.filter((mail) => mail.to.includes(email));
      expect(mine.length).toBeGreaterThanOrEqual(count);
      return mine;
    },
    { timeoutMs: 20_000, pauseMs: 10 },
  );
}

const tokenIn = (text: string): string => {
  const match = /http:\/\/works\.test\/r\/([A-Za-z0-9_-]{43})/.exec(text);
  if (!match) throw new Error(`no answer link in: ${text}`);
  return match[1]!;
};

const recipientClient = (token: string) => createClient({ baseUrl: server.baseUrl, apiKey: token, retry: false });

describe('the email to the recipient', () => {
  it('reaches a real SMTP server with headers, text and HTML parts and the answer link', async () => {
    const where = await newWork();
    const dueAt = daysFromNow(30);
    const { request, email, path } = await send(where, { dueAt });
    expect(request.emailDelivery).toEqual({ status: 'queued', lastSentAt: null, failure: null });
    const [mail] = await mailTo(email);
    expect(mail!.from).toBe('no-reply@works.test');
    expect(mail!.to).toEqual([email]);
    const parsed = mail!.parsed;
    expect(parsed.from?.value).toEqual([{ name: 'works-api', address: 'no-reply@works.test' }]);
    expect(parsed.to && 'text' in parsed.to ? parsed.to.text : undefined).toBe(email);
    expect(parsed.subject).toBe('sender Tester of "Mail Inc" sent you a request');
    expect(parsed.messageId).toBeTruthy();
    // The stop link (every email has one), also for mail clients' one-click unsubscribe (RFC 8058).
    const stopLink = /http:\/\/works\.test\/stop\/[A-Za-z0-9_-]{43}/.exec(parsed.text!)?.[0];
    expect(stopLink).toBeDefined();
    // (Folded by the SMTP client: a header line may continue on the next, indented.)
    const header = (name: string) => new RegExp(`^${name}:\\s+(.+)\\r\\n`, 'm').exec(mail!.raw)?.[1];
    expect(header('List-Unsubscribe')).toBe(`<${stopLink!}>`);
    expect(header('List-Unsubscribe-Post')).toBe('List-Unsubscribe=One-Click');
    expect(mail!.raw).toMatch(/Content-Type: multipart\/alternative/i);
    const token = tokenIn(parsed.text!);
    expect(tokenIn(parsed.html as string)).toBe(token);
    for (const part of [parsed.text!, parsed.html as string]) {
      expect(part).toContain('Annual report 2026');
      expect(part).toContain('Please confirm the figures in section 3.');
      expect(part).toContain(formatDue(new Date(dueAt))); // such as 'Sunday 1 December 2030, 17:00 UTC'
    }
    expect(parsed.html).toContain(`<a href="http://works.test/r/${token}"`);

    // Members see that it went out; the token itself is nowhere in the database or the logs.
    await eventually(async () => {
      const { request: read } = ok(
        await owner.client.GET('/tenants/{tenant_id}/works/{work_id}/requests/{id}', { params: { path } }),
      );
      expect(read.emailDelivery?.status).toBe('sent');
      expect(Date.parse(read.emailDelivery!.lastSentAt!)).toBeGreaterThanOrEqual(Date.parse(request.createdAt));
    });
    const stored = await server.database.prisma.$queryRawUnsafe<Array<{ row: string }>>(
      `SELECT row_to_json(l)::text AS row FROM answer_links l WHERE request_id = $1::uuid
       UNION ALL SELECT row_to_json(m)::text FROM mail_outbox m WHERE request_id = $1::uuid`,
      request.id,
    );
    expect(stored).toHaveLength(2);
    for (const { row } of stored) expect(row).not.toContain(token);
    expect(server.rawLogs.filter((line) => line.includes(token))).toEqual([]);
  });

  it('escapes the title and message a sender wrote, so no markup reaches the HTML part', async () => {
    const where = await newWork('<b>Work</b> & co');
    const { email } = await send(where, {
      title: '<script>alert("t")</script>',
      message: '<a href="https://evil.example/">Click</a> <img src=x onerror=alert(1)>',
    });
    const [mail] = await mailTo(email);
    const html = mail!.parsed.html as string;
    expect(html).not.toMatch(/<script|<img|<b>|href="https:\/\/evil/);
    expect(html).toContain('&lt;script&gt;alert(&quot;t&quot;)&lt;/script&gt;');
    expect(html).toContain('&lt;a href=&quot;https://evil.example/&quot;&gt;Click&lt;/a&gt;');
    expect(html).toContain('&lt;b&gt;Work&lt;/b&gt; &amp; co');
    // What the sender wrote stays out of the subject.
    expect(mail!.parsed.subject).toBe('sender Tester of "Mail Inc" sent you a request');
  });

  it('records a permanent refusal on the request, visible to members', async () => {
    const where = await newWork();
    sink.refuseWith({ code: 550, message: 'No such user here' });
    try {
      const { path } = await send(where);
      await eventually(async () => {
        const { request } = ok(
          await owner.client.GET('/tenants/{tenant_id}/works/{work_id}/requests/{id}', { params: { path } }),
        );
        expect(request.emailDelivery).toEqual({
          status: 'failed',
          lastSentAt: null,
          failure: expect.stringContaining('No such user here'),
        });
      });
    } finally {
      sink.refuseWith(null);
    }
  });
});

describe('the answer link', () => {
  it('shows the request to its recipient, and nothing else of the tenant', async () => {
    const where = await newWork();
    const dueAt = daysFromNow(30);
    const { email, request } = await send(where, { dueAt });
    const token = tokenIn((await mailTo(email))[0]!.parsed.text!);
    const view = ok(await recipientClient(token).GET('/recipient/request')).request;
    expect(view).toEqual({
      status: 'pending',
      workName: 'Annual report 2026',
      title: 'Confirm Q3 figures',
      message: 'Please confirm the figures in section 3.',
      dueAt,
      sender: { firstName: 'sender', lastName: 'Tester', email: owner.email },
      recipient: { email, firstName: 'Grace', lastName: 'Hopper' },
      answer: null,
      createdAt: request.createdAt,
      confirmedAt: null,
    });
  });

  it('answers the request: confirmed with the answer, by the recipient, once', async () => {
    const where = await newWork();
    const { email, path } = await send(where);
    const token = tokenIn((await mailTo(email))[0]!.parsed.text!);
    const answered = ok(
      await recipientClient(token).POST('/recipient/request/answer', { body: { answer: 'The figures are correct.' } }),
    ).request;
    expect(answered).toMatchObject({ status: 'confirmed', answer: 'The figures are correct.' });
    expect(answered.confirmedAt).not.toBeNull();

    const { request } = ok(
      await owner.client.GET('/tenants/{tenant_id}/works/{work_id}/requests/{id}', { params: { path } }),
    );
    expect(request).toMatchObject({ status: 'confirmed', answer: 'The figures are correct.' });
    const { events } = ok(
      await owner.client.GET('/tenants/{tenant_id}/works/{work_id}/requests/{id}/events', { params: { path } }),
    );
    expect(events.edges.map(({ node }) => node)).toEqual([
      expect.objectContaining({
        action: 'confirm',
        fromStatus: 'pending',
        toStatus: 'confirmed',
        actorType: 'recipient',
        actor: { email, firstName: 'Grace', lastName: 'Hopper' },
        note: 'The figures are correct.',
      }),
    ]);
    // request.confirmed goes to the webhooks, like a member's confirm.
    const outbox = await server.database.prisma.webhookEvent.findMany({
      where: { orderingKey: request.id },
      orderBy: { id: 'asc' },
    });
    expect(outbox.map((event) => event.type)).toEqual(['request.created', 'request.confirmed']);

    // A second answer is refused: the first one stands. The link still shows the request, read-only.
    const again = await recipientClient(token).POST('/recipient/request/answer', { body: { answer: 'No.' } });
    expect(again.response.status).toBe(409);
    expect(again.error).toMatchObject({ code: 'invalid_transition', currentStatus: 'confirmed' });
    expect(ok(await recipientClient(token).GET('/recipient/request')).request.answer).toBe('The figures are correct.');
  });

  it('is refused when missing (401), and is a 404 when unknown, malformed, resent or cancelled', async () => {
    const noToken = await server.call('/v1/recipient/request');
    expect(noToken.status).toBe(401);
    expect(noToken.headers.get('www-authenticate')).toMatch(/^Bearer/);
    for (const token of ['A'.repeat(43), 'not-a-token', owner.apiKey]) {
      const res = await recipientClient(token).GET('/recipient/request');
      expect(res.response.status).toBe(404);
      expect(res.error).toMatchObject({ code: 'not_found' });
    }

    const where = await newWork();
    const { email, path } = await send(where);
    const first = tokenIn((await mailTo(email))[0]!.parsed.text!);
    const resent = ok(
      await owner.client.POST('/tenants/{tenant_id}/works/{work_id}/requests/{id}/resend', { params: { path } }),
    ).request;
    expect(resent.emailDelivery?.status).toBe('queued');
    const second = tokenIn((await mailTo(email, 2))[1]!.parsed.text!);
    expect(second).not.toBe(first);
    expect((await recipientClient(first).GET('/recipient/request')).response.status).toBe(404);
    expect((await recipientClient(second).GET('/recipient/request')).response.status).toBe(200);

    ok(await owner.client.DELETE('/tenants/{tenant_id}/works/{work_id}/requests/{id}/cancel', { params: { path } }));
    expect((await recipientClient(second).GET('/recipient/request')).response.status).toBe(404);
    const answer = await recipientClient(second).POST('/recipient/request/answer', { body: { answer: 'Late' } });
    expect(answer.response.status).toBe(404);
    // A cancelled request cannot be resent either.
    const resend = await owner.client.POST('/tenants/{tenant_id}/works/{work_id}/requests/{id}/resend', {
      params: { path },
    });
    expect(resend.response.status).toBe(409);
    expect(resend.error).toMatchObject({ code: 'invalid_transition', currentStatus: 'cancelled' });
  });

  it(`expires ANSWER_LINK_TTL (30 days) after its email: the page says so and how to get a new one; a resend brings one`, async () => {
    const where = await newWork();
    const { email, path } = await send(where);
    const [mail] = await mailTo(email);
    const token = tokenIn(mail!.parsed.text!);
    // The email says until when its link works.
    const sentAt = await server.database.prisma.answerLink.findFirstOrThrow({ where: { requestId: path.id } });
    const until = new Date(sentAt.createdAt.getTime() + 30 * 86_400_000);
    expect(mail!.parsed.text).toContain(`works until ${formatDue(until)}`);
    expect((await fetch(`${server.baseUrl}/r/${token}`)).status).toBe(200);

    // 30 days later (the link's time moved back): expired, on the page and through the API, and it takes no answer.
    await server.database.prisma.answerLink.updateMany({
      where: { requestId: path.id },
      data: { createdAt: new Date(Date.now() - 30 * 86_400_000 - 1000) },
    });
    const page = await fetch(`${server.baseUrl}/r/${token}`);
    expect(page.status).toBe(410);
    expect(page.headers.get('cache-control')).toBe('no-store');
    const html = await page.text();
    expect(html).toContain('This link has expired');
    expect(html).toContain('Answer links work for 30 days');
    expect(html).toContain('ask the person who sent you the request to send it again');
    expect(html).not.toContain('Confirm Q3 figures'); // nothing of the request
    const posted = await fetch(`${server.baseUrl}/r/${token}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'answer=Too+late',
    });
    expect(posted.status).toBe(410);
    const viaApi = await recipientClient(token).GET('/recipient/request');
    expect([viaApi.response.status, viaApi.error?.code, viaApi.error?.detail]).toEqual([
      404,
      'not_found',
      'This link has expired: ask the sender of the request to send it again, for a new link.',
    ]);
    const { request } = ok(
      await owner.client.GET('/tenants/{tenant_id}/works/{work_id}/requests/{id}', { params: { path } }),
    );
    expect(request.status).toBe('pending');

    // The sender resends: the new email's link works.
    ok(await owner.client.POST('/tenants/{tenant_id}/works/{work_id}/requests/{id}/resend', { params: { path } }));
    const fresh = tokenIn((await mailTo(email, 2))[1]!.parsed.text!);
    expect((await fetch(`${server.baseUrl}/r/${fresh}`)).status).toBe(200);
  });

  it('keeps the ETag when only the email status changes, so If-Match still holds', async () => {
    const where = await newWork();
    const { email, path } = await send(where);
    const before = await owner.client.GET('/tenants/{tenant_id}/works/{work_id}/requests/{id}', { params: { path } });
    const etag = before.response.headers.get('etag')!;
    await mailTo(email);
    await eventually(async () => {
      const after = await owner.client.GET('/tenants/{tenant_id}/works/{work_id}/requests/{id}', { params: { path } });
      expect(after.data?.request.emailDelivery?.status).toBe('sent');
      expect(after.response.headers.get('etag')).toBe(etag);
    });
    const confirmed = await owner.client.PUT('/tenants/{tenant_id}/works/{work_id}/requests/{id}/confirm', {
      params: { path, header: { 'If-Match': etag } },
    });
    expect(confirmed.response.status).toBe(200);
  });
});

describe('the recipient page', () => {
  it('shows the request with an answer form, takes the answer, then shows it read-only', async () => {
    const where = await newWork();
    const { email, path } = await send(where, { title: '<i>Title</i>', dueAt: daysFromNow(30) });
    const token = tokenIn((await mailTo(email))[0]!.parsed.text!);
    const page = await fetch(`${server.baseUrl}/r/${token}`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    expect(page.headers.get('cache-control')).toBe('no-store');
    expect(page.headers.get('content-security-policy')).toMatch(/default-src 'none'.*form-action 'self'/);
    const html = await page.text();
    expect(html).toContain('<meta name="viewport" content="width=device-width, initial-scale=1">');
    expect(html).toContain('&lt;i&gt;Title&lt;/i&gt;');
    expect(html).not.toContain('<i>Title</i>');
    expect(html).toContain('Annual report 2026');
    expect(html).toContain('<form method="post">');
    expect(html).not.toContain(where.tenantId);

    const posted = await fetch(`${server.baseUrl}/r/${token}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ answer: 'Yes, <all> correct.' }),
      redirect: 'manual',
    });
    expect(posted.status).toBe(303);
    expect(posted.headers.get('location')).toBe(`/r/${token}`);
    const closed = await (await fetch(`${server.baseUrl}/r/${token}`)).text();
    expect(closed).toContain('You have answered this request.');
    expect(closed).toContain('Yes, &lt;all&gt; correct.');
    expect(closed).not.toContain('<form');
    const { request } = ok(
      await owner.client.GET('/tenants/{tenant_id}/works/{work_id}/requests/{id}', { params: { path } }),
    );
    expect(request).toMatchObject({ status: 'confirmed', answer: 'Yes, <all> correct.' });

    const refused = await fetch(`${server.baseUrl}/r/${token}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ answer: 'Again' }),
    });
    expect(refused.status).toBe(409);
    const gone = await fetch(`${server.baseUrl}/r/${'B'.repeat(43)}`);
    expect(gone.status).toBe(404);
    expect(await gone.text()).toContain('This link no longer works');
    // The access log names the route, never the address with the token.
    expect(server.rawLogs.filter((line) => line.includes(token))).toEqual([]);
    expect(server.logs.some((line) => line.route === '/r/:token')).toBe(true);
  });
});

describe('rate limits', () => {
  it('limit each link, and each client address, per minute', async () => {
    const limited = await startTestServer({ recipientRateLimit: { perTokenPerMinute: 3, perAddressPerMinute: 5 } });
    try {
      const a = 'a'.repeat(43);
      const statuses = [];
      for (let i = 0; i < 4; i++) statuses.push((await limited.call('/v1/recipient/request', { apiKey: a })).status);
      expect(statuses).toEqual([404, 404, 404, 429]);
      // Another link from the same address: its own budget, until the address's is spent.
      expect((await limited.call(`/r/${'b'.repeat(43)}`)).status).toBe(404);
      const over = await limited.call(`/r/${'c'.repeat(43)}`);
      expect(over.status).toBe(429);
      expect(over.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(over.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    } finally {
      await limited.close();
    }
  });

  it('count the client address the way the rest of the service does (X-Forwarded-For only through TRUST_PROXY)', async () => {
    const behindProxy = await startTestServer({
      recipientRateLimit: { perTokenPerMinute: 1000, perAddressPerMinute: 2 },
      trustProxy: ['loopback'],
    });
    try {
      const page = (from: string, link: string) =>
        behindProxy.call(`/r/${link.repeat(43)}`, { headers: { 'X-Forwarded-For': from } });
      expect((await page('203.0.113.7', 'd')).status).toBe(404);
      expect((await page('203.0.113.7', 'e')).status).toBe(404);
      expect((await page('203.0.113.7', 'f')).status).toBe(429);
      // Another client behind the same proxy has its own budget.
      expect((await page('203.0.113.8', 'g')).status).toBe(404);
    } finally {
      await behindProxy.close();
    }
  });
});

describe('reminders', () => {
  it('a pending request with a due date gets exactly one, REMINDER_BEFORE ahead of it', async () => {
    let now = new Date();
    const mailbox = new DevMailbox(silentLogger());
    const mine: string[] = [];
    const manual = await startTestServer({
      mail: {
        transport: mailbox,
        manual: true,
        clock: () => now,
        onlyTenants: () => mine,
        reminderBeforeMs: 3_600_000,
      },
    });
    try {
      const user = await manual.createUser('reminding');
      const tenant = await createTenant(user, 'Reminders Inc');
      mine.push(tenant.id);
      const work = await createWork(user, tenant.id, 'Reminded work');
      const due = new Date(now.getTime() + 3 * 3_600_000);
      const create = async (dueAt: Date | undefined, email: string) =>
        ok(
          await user.client.POST('/tenants/{tenant_id}/works/{work_id}/requests', {
            params: { path: { tenant_id: tenant.id, work_id: work.id } },
            body: { title: 'Remind me', recipient: { email }, ...(dueAt && { dueAt: dueAt.toISOString() }) },
          }),
        ).request;
      await create(due, 'due@example.com');
      await create(undefined, 'undated@example.com');
      const answered = await create(due, 'answered@example.com');
      // Due within the hour already: its first email is as recent as a reminder would be.
      await create(new Date(now.getTime() + 30 * 60_000), 'soon@example.com');
      now = new Date();
      expect(await manual.mailSender!.runOnce()).toBe(4);
      const token = tokenIn(mailbox.messages().find((mail) => mail.to === 'answered@example.com')!.text);
      ok(
        await createClient({ baseUrl: manual.baseUrl, apiKey: token, retry: false }).POST('/recipient/request/answer', {
          body: { answer: 'Done' },
        }),
      );
      expect(answered.status).toBe('pending');

      // Not yet inside the window: nothing.
      now = new Date(due.getTime() - 2 * 3_600_000);
      expect(await manual.mailSender!.queueReminders()).toBe(0);
      // Inside it: one reminder, for the one request still pending and not reminded; never a second.
      now = new Date(due.getTime() - 50 * 60_000);
      expect(await manual.mailSender!.runOnce()).toBe(1);
      expect(await manual.mailSender!.runOnce()).toBe(0);
      now = new Date(due.getTime() - 10 * 60_000);
      expect(await manual.mailSender!.runOnce()).toBe(0);
      const reminders = mailbox.messages().filter((mail) => mail.subject.startsWith('Reminder:'));
      expect(reminders.map((mail) => mail.to)).toEqual(['due@example.com']);
      expect(reminders[0]!.text).toContain('is still waiting for your answer');
      // The reminder's link works, and so does the first email's.
      const links = mailbox
        .messages()
        .filter((mail) => mail.to === 'due@example.com')
        .map((mail) => tokenIn(mail.text));
      expect(links).toHaveLength(2);
      for (const link of links) {
        const view = await createClient({ baseUrl: manual.baseUrl, apiKey: link, retry: false }).GET(
          '/recipient/request',
        );
        expect(view.response.status).toBe(200);
      }
    } finally {
      await manual.close();
    }
  });
});

describe('the dev mailbox (GET /dev/mailbox, without SMTP)', () => {
  it('does not exist when mail goes through SMTP: a 404, which tells the console to hide its Mailbox', async () => {
    const response = await server.call('/dev/mailbox', { apiKey: owner.apiKey });
    expect(response.status).toBe(404);
  });

  it("shows owners and admins their tenants' emails, members only those of their own requests, anyone what is addressed to them", async () => {
    const mailbox = new DevMailbox(silentLogger());
    const mine: string[] = [];
    const shared = await startTestServer({
      mail: { transport: mailbox, onlyTenants: () => mine },
      devMailbox: mailbox,
    });
    try {
      const sender = await shared.createUser('mailbox-sender');
      const [admin, colleague, stranger, recipient] = await Promise.all(
        ['mailbox-admin', 'mailbox-colleague', 'mailbox-stranger', 'mailbox-recipient'].map((name) =>
          shared.createUser(name),
        ),
      );
      const tenant = await createTenant(sender, 'Mailbox Inc');
      mine.push(tenant.id);
      await addMember(sender, tenant.id, admin!, 'admin');
      await addMember(sender, tenant.id, colleague!, 'member');
      const work = await createWork(sender, tenant.id, 'Mailbox work');
      const sendAs = async (who: TestUser, title: string) =>
        ok(
          await who.client.POST('/tenants/{tenant_id}/works/{work_id}/requests', {
            params: { path: { tenant_id: tenant.id, work_id: work.id } },
            body: { title, recipient: { email: recipient!.email.toUpperCase() } },
          }),
        ).request;
      const ownersRequest = await sendAs(sender, 'Check the mailbox');
      const colleaguesRequest = await sendAs(colleague!, 'My own request');
      const read = async (apiKey?: string) => {
        const response = await shared.call('/dev/mailbox', apiKey === undefined ? {} : { apiKey });
        return { status: response.status, cache: response.headers.get('cache-control'), body: await response.json() };
      };
      /** The requests whose emails `who` sees (the invitations' emails have none). */
      const requestsSeenBy = async (who: TestUser) =>
        ((await read(who.apiKey)).body.messages as Array<{ request: { id: string } | null }>)
          .flatMap((mail) => (mail.request ? [mail.request.id] : []))
          .sort();
      await eventually(async () => expect(await requestsSeenBy(sender)).toHaveLength(2));

      const seen = await read(sender.apiKey);
      expect(seen.cache).toBe('no-store');
      const mail = (seen.body.messages as Array<Record<string, unknown>>).find(
        (message) => (message.request as { id: string }).id === ownersRequest.id,
      );
      expect(mail).toMatchObject({
        to: recipient!.email, // stored in lower case
        subject: 'mailbox-sender Tester of "Mailbox Inc" sent you a request',
        request: { tenantId: tenant.id, workId: work.id, id: ownersRequest.id, ownerId: sender.id },
      });
      expect(mail!.text).toMatch(/\/r\/[A-Za-z0-9_-]{43}/);
      const both = [ownersRequest.id, colleaguesRequest.id].sort();
      expect(await requestsSeenBy(admin!)).toEqual(both); // an admin: every request of the tenant
      expect(await requestsSeenBy(colleague!)).toEqual([colleaguesRequest.id]); // a member: their own only
      expect(await requestsSeenBy(recipient!)).toEqual(both); // addressed to them
      expect((await read(stranger!.apiKey)).body.messages).toEqual([]); // neither: not a word of it
      expect((await read()).status).toBe(401);
      expect((await read('wk_nope_nope')).status).toBe(401);
    } finally {
      await shared.close();
    }
  });

  it("marks an answer given through a link the dev mailbox kept: not the recipient's word, in the event, the request and the webhook", async () => {
    const mailbox = new DevMailbox(silentLogger());
    const mine: string[] = [];
    const shared = await startTestServer({
      mail: { transport: mailbox, onlyTenants: () => mine },
      devMailbox: mailbox,
    });
    try {
      const sender = await shared.createUser('dev-answer');
      const tenant = await createTenant(sender, 'Dev answers');
      mine.push(tenant.id);
      const work = await createWork(sender, tenant.id);
      const path = { tenant_id: tenant.id, work_id: work.id };
      const { request } = ok(
        await sender.client.POST('/tenants/{tenant_id}/works/{work_id}/requests', {
          params: { path },
          body: { title: 'Answer me', recipient: { email: freshEmail('dev-rcpt'), firstName: 'Grace' } },
        }),
      );
      let token = '';
      await eventually(async () => {
        const kept = mailbox.messages().find((message) => message.request?.id === request.id);
        token = tokenIn(kept?.text ?? '');
      });
      const answered = await fetch(`${shared.baseUrl}/r/${token}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: 'answer=Yes%2C+correct.',
        redirect: 'manual',
      });
      expect(answered.status).toBe(303);
      const requestPath = { ...path, id: request.id };
      const read = ok(
        await sender.client.GET('/tenants/{tenant_id}/works/{work_id}/requests/{id}', {
          params: { path: requestPath },
        }),
      );
      expect(read.request).toMatchObject({
        status: 'confirmed',
        answer: 'Yes, correct.',
        confirmedThroughDevMailbox: true,
      });
      const { events } = ok(
        await sender.client.GET('/tenants/{tenant_id}/works/{work_id}/requests/{id}/events', {
          params: { path: requestPath },
        }),
      );
      expect(events.edges[0]!.node).toMatchObject({
        action: 'confirm',
        actorType: 'recipient',
        throughDevMailbox: true,
      });
      const event = await shared.database.prisma.webhookEvent.findFirstOrThrow({
        where: { orderingKey: request.id, type: 'request.confirmed' },
      });
      expect(JSON.parse(event.body).data.request.confirmedThroughDevMailbox).toBe(true);
    } finally {
      await shared.close();
    }
  });

  it('never writes an email, its answer link or its stop link to the log, at any level', async () => {
    const lines: string[] = [];
    const logger = createLogger(
      'trace',
      new Writable({
        write(chunk: Buffer, _encoding, done) {
          lines.push(chunk.toString('utf8'));
          done();
        },
      }),
    );
    const mailbox = new DevMailbox(logger);
    const mine: string[] = [];
    const shared = await startTestServer({
      mail: { transport: mailbox, onlyTenants: () => mine },
      devMailbox: mailbox,
    });
    try {
      const sender = await shared.createUser('logged');
      const tenant = await createTenant(sender, 'Quiet logs');
      mine.push(tenant.id);
      const work = await createWork(sender, tenant.id);
      const { request } = ok(
        await sender.client.POST('/tenants/{tenant_id}/works/{work_id}/requests', {
          params: { path: { tenant_id: tenant.id, work_id: work.id } },
          body: { title: 'Secret title', recipient: { email: freshEmail('quiet') } },
        }),
      );
      let kept: DevMail | undefined;
      await eventually(async () => {
        kept = mailbox.messages().find((message) => message.request?.id === request.id);
        expect(kept).toBeDefined();
      });
      const token = tokenIn(kept!.text);
      const stop = /\/stop\/([A-Za-z0-9_-]{43})/.exec(kept!.text)![1]!;
      await fetch(`${shared.baseUrl}/r/${token}`);
      await fetch(`${shared.baseUrl}/stop/${stop}`);
      // The mailbox said it kept an email, and nothing of it.
      expect(lines.some((line) => line.includes('dev mailbox: an email was kept'))).toBe(true);
      for (const secret of [token, stop, 'Secret title', kept!.to])
        expect([...lines, ...shared.rawLogs].filter((line) => line.includes(secret))).toEqual([]);
    } finally {
      await shared.close();
    }
  });
});
