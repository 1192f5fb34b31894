import { CONTROL_CHARACTERS } from '../../src/domain/text';
import { DevMailbox } from '../../src/mail/transport';
import { silentLogger } from '../../src/observability/logger';
import { createTenant, createWork, ok } from '../support/fixtures';
import { startTestServer, type TestServer, type TestUser } from '../support/server';

/**
 * The recipient's answer is held to the same rules as the API's other long texts (LongText): no control character
 * but line breaks and tabs (an ANSI escape is not stored; a NUL, which PostgreSQL cannot hold, is a 400, not a
 * 500), no unpaired surrogate, 5,000 characters; through the API and through the page's form alike.
 */
let server: TestServer;
let owner: TestUser;
let tenantId: string;
let workId: string;
const mailbox = new DevMailbox(silentLogger());

beforeAll(async () => {
  server = await startTestServer({
    mail: { transport: mailbox, manual: true, onlyTenants: () => [tenantId] },
    recipientRateLimit: { perTokenPerMinute: 1000, perAddressPerMinute: 1000 },
  });
  owner = await server.createUser('answers');
  tenantId = (await createTenant(owner, 'Answer Rules Inc')).id;
  workId = (await createWork(owner, tenantId, 'Answers')).id;
});
afterAll(() => server.close());

/** A new pending request, its answer token (from the email) and its path. */
async function newRequest() {
  const { request } = ok(
    await owner.client.POST('/tenants/{tenant_id}/works/{work_id}/requests', {
      params: { path: { tenant_id: tenantId, work_id: workId } },
      body: { title: 'Check the answer rules', recipient: { email: `rcpt-${Date.now()}@example.com` } },
    }),
  );
  await server.mailSender!.runOnce();
  const mail = mailbox.messages().find((message) => message.request?.id === request.id);
  const token = /\/r\/([A-Za-z0-9_-]{43})/.exec(mail?.text ?? '')?.[1];
  if (!token) throw new Error('no answer link was emailed');
  return { token, path: { tenant_id: tenantId, work_id: workId, id: request.id } };
}

const stored = async (path: { tenant_id: string; work_id: string; id: string }) =>
  ok(await owner.client.GET('/tenants/{tenant_id}/works/{work_id}/requests/{id}', { params: { path } })).request;

const answerThroughApi = (token: string, body: string) =>
  fetch(`${server.baseUrl}/v1/recipient/request/answer`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body,
  });

const answerThroughPage = (token: string, answer: string) =>
  fetch(`${server.baseUrl}/r/${token}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ answer }),
    redirect: 'manual',
  });

it('refuses control characters and unpaired surrogates through the API with 400 validation_failed', async () => {
  const { token, path } = await newRequest();
  for (const body of [
    '{"answer":"a\\u0000b"}', // NUL: PostgreSQL refuses it in text, which was a 500
    '{"answer":"\\u001b[31mred\\u001b[0m"}', // an ANSI escape sequence
    '{"answer":"bell\\u0007"}',
    '{"answer":"c1\\u009b"}',
    '{"answer":"lone \\ud800"}',
    JSON.stringify({ answer: 'a'.repeat(5001) }),
  ]) {
    const res = await answerThroughApi(token, body);
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({
      code: 'validation_failed',
      errors: [expect.objectContaining({ path: '/body/answer' })],
    });
  }
  expect(await stored(path)).toMatchObject({ status: 'pending', answer: null });
  expect(server.bugs).toEqual([]);

  const res = await answerThroughApi(token, JSON.stringify({ answer: 'Line one\r\nline two\tand a tab 😀' }));
  expect(res.status).toBe(200);
  expect(await stored(path)).toMatchObject({ status: 'confirmed', answer: 'Line one\r\nline two\tand a tab 😀' });
});

it('refuses them through the page with a 400 page that gives the answer back without them', async () => {
  const { token, path } = await newRequest();
  for (const answer of ['a\u0000b', '\u001b[31mred\u001b[0m', 'c1\u0085']) {
    const res = await answerThroughPage(token, answer);
    expect(res.status).toBe(400);
    const html = await res.text();
    expect(html).toContain('invisible control characters');
    expect(html).not.toMatch(new RegExp(CONTROL_CHARACTERS.source));
  }
  const long = await answerThroughPage(token, 'a'.repeat(5001));
  expect(long.status).toBe(400);
  expect(await long.text()).toContain('An answer is at most 5,000 characters.');
  // 5,000 characters counted as the API counts them: in code points.
  expect(await stored(path)).toMatchObject({ status: 'pending', answer: null });
  expect(server.bugs).toEqual([]);

  const fine = await answerThroughPage(token, `${'😀'.repeat(4990)}\r\nok`);
  expect(fine.status).toBe(303);
  expect((await stored(path)).answer).toBe(`${'😀'.repeat(4990)}\r\nok`);
});
