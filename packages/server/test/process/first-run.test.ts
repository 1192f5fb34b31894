import fc from 'fast-check';
import { readMigrations } from '@works-api/prisma';
import { daysFromNow, withOffset } from '../support/clock';
import {
  type Answer,
  type EmptyDatabase,
  emptyDatabase,
  fuzzFixtures,
  queryFormsByOperation,
  type Read,
  sendFuzzed,
  startCommand,
  Tour,
} from '../support/first-run';
import { eventually } from '../support/load';
import { killAll, type ServerProcess, spawnServer } from '../support/process';
import { type Receiver, startReceiver } from '../support/receiver';
import { ADMIN_TOKEN } from '../support/server';
import {
  type FuzzRequest,
  invalidRequest,
  loadFaker,
  type Operation,
  operations,
  validRequest,
} from '../support/spec-fuzz';

/**
 * The first run, as a newcomer makes it (issue 42): the server started as the README starts it (the node command
 * of `pnpm start`, with ADMIN_TOKEN) on a database nobody has used (a data folder that does not exist yet; with
 * DATABASE_URL set, an empty PostgreSQL database of its own), so that it runs every migration itself. Then, before
 * any restart: every operation of the contract, from the operator's first user to a tenant with members, works,
 * requests in every status, webhooks and a recipient's answer; every form of every query parameter the contract
 * has (lists of values included, `status=pending,confirmed`), each also paged through; the conditional and
 * idempotent forms; and the spec-driven fuzz (test/support/spec-fuzz.ts). Every answer is checked against the
 * contract. Last, a restart on the same data, and every read of the query forms answered the same: a database
 * migrated by the process that serves it must answer as one opened already migrated.
 *
 * A new operation fails the coverage test until the tour calls it (or it answers a success called with the ids
 * and example body the contract gives); a new query parameter gets its forms from its schema, or fails until the
 * suite gives it values (`values` below). FUZZ_SEED and FUZZ_RUNS as in spec-fuzz.test.ts (4 runs per operation
 * and kind by default here: spec-fuzz.test.ts runs 8 in every `pnpm test`, with more checks, on a migrated copy).
 */
const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : Math.floor(Math.random() * 2 ** 31);
const RUNS = Number(process.env.FUZZ_RUNS ?? 4);

let database: EmptyDatabase;
let receiver: Receiver;
let server: ServerProcess;
let tour: Tour;
const started = Date.now();
const seconds = (since: number) => `${((Date.now() - since) / 1000).toFixed(1)} s`;

const env = () => ({
  ...database.env,
  ADMIN_TOKEN,
  // What the README's start leaves at its defaults, but for the emails (sent, to the dev mailbox, for the
  // recipient's link), webhooks to a receiver on loopback, and rate limits no suite reaches (their headers stay).
  MAIL_SENDER: 'true',
  WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
  RATE_LIMIT_PER_MINUTE: '1000000',
  RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE: '1000000',
});
const start = async () => {
  const { nodeArgs, script, cwd } = startCommand();
  return spawnServer(env(), { nodeArgs, script, cwd });
};

beforeAll(async () => {
  [database, receiver] = await Promise.all([emptyDatabase(), startReceiver()]);
  server = await start();
  console.log(`first-run (${database.kind}): listening ${seconds(started)} after the start, on an empty database`);
}, 180_000);
afterAll(async () => {
  await killAll(server ? [server] : []);
  await receiver?.close();
  await database?.remove();
});

const suffix = Math.random().toString(36).slice(2, 8);
const email = (name: string) => `${name}-${suffix}@example.com`;
const person = (name: string) => ({ email: email(name), firstName: name, lastName: 'First-Run' });
/** Who receives two requests: `recipient=` finds both, and pages from one to the other. */
const sharedRecipient = email('grace.hopper');
type Created = { user: { id: string }; apiKey: { id: string; secret: string } };
/** The tour's people by name: ada owns the tenant; grace, linus and mary are invited. */
const users: Record<string, Created> = {};
const key = (name: string) => users[name]!.apiKey.secret;
/** The id of what an answer holds (`{ "tenant": { "id": … } }`). */
const idOf = (answer: Answer) => (Object.values(answer.body)[0] as { id: string }).id;
const listOf = (answer: Answer) => Object.values(answer.body)[0] as Connection;
interface Connection {
  totalCount: number;
  totalCountCapped?: boolean;
  edges: Array<{ cursor: string; node: Record<string, unknown> & { id?: string } }>;
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
}

it('runs every migration itself: the database was empty', () => {
  const applied = server.lines.find((line) => line.msg === 'database migrations applied');
  expect(applied?.migrations).toEqual(readMigrations().map((migration) => migration.name));
});

it('answers every operation of the contract, building a tenant from nothing', async () => {
  const since = Date.now();
  tour = new Tour(server.baseUrl, {}, { apiKey: '', adminToken: ADMIN_TOKEN });
  const { ids } = tour;
  const call = tour.call.bind(tour);
  for (const name of ['ada', 'grace', 'linus', 'mary'])
    users[name] = (await call<Created>('adminCreateUser', { body: person(name) })).body;
  tour.secrets.apiKey = key('ada');
  ids.user_id = users.grace!.user.id;
  await call('adminGetUser');
  await call('getMe');
  ids.api_key_id = (await call<Created>('createApiKey', { body: { name: 'spare' } })).body.apiKey.id;
  await call('createApiKey', { body: { name: 'CI key' } });

  // Two tenants (the first named with an accent, for the searches), then webhooks, so every event is delivered.
  ids.tenant_id = idOf(await call('createTenant', { body: { name: 'Rapport été' } }));
  const second = idOf(await call('createTenant', { body: { name: 'Second' } }));
  await call('updateTenant', { body: { name: 'Rapport été 2026' } });
  const endpoint = async (description: string, enabled = true) =>
    idOf(await call('createWebhookEndpoint', { body: { url: receiver.url, description, enabled } }));
  ids.endpoint_id = await endpoint('Receiver');
  await endpoint('Paused', false);
  const spareEndpoint = await endpoint('Spare');
  await call('updateWebhookEndpoint', { body: { description: 'The receiver' } });
  await call('rotateWebhookEndpointSecret');
  await call('testWebhookEndpoint');

  // Members by invitation: grace accepts (then becomes admin) and declines another; linus joins and is removed;
  // mary never answers (her invitations are listed); of two invitations to addresses without an account, one is
  // deleted.
  const invite = async (name: string, tenantId = ids.tenant_id!) =>
    idOf(await call('addMember', { path: { tenant_id: tenantId }, body: { email: email(name), role: 'member' } }));
  for (const name of ['grace', 'linus', 'mary']) await invite(name);
  for (const name of ['grace', 'mary']) await invite(name, second);
  const withoutAccount = await invite('nobody');
  await invite('someone');
  type Invitation = { id: string; tenant: { id: string } };
  const invitationTo = async (name: string, tenantId: string) =>
    listOf(await call('listMyInvitations', { as: key(name) }))
      .edges.map(({ node }) => node as unknown as Invitation)
      .find((invitation) => invitation.tenant.id === tenantId)!.id;
  const answer = async (name: string, operationId: string, tenantId: string) =>
    call(operationId, { as: key(name), path: { invitation_id: await invitationTo(name, tenantId) } });
  await answer('grace', 'acceptInvitation', ids.tenant_id);
  await answer('grace', 'declineInvitation', second);
  await answer('linus', 'acceptInvitation', ids.tenant_id);
  await call('getMember');
  await call('updateMember', { body: { role: 'admin' } });
  await call('removeMember', { path: { user_id: users.linus!.user.id } });
  await call('deleteInvitation', { path: { invitation_id: withoutAccount } });

  // Works (the third, with a request, discarded), then requests in every status, with and without a due date.
  const work = async (name: string) =>
    idOf(await call('createWork', { body: { name, description: `${name}: les chiffres` } }));
  ids.work_id = await work('Rapport été');
  const figures = await work('Quarterly figures');
  const old = await work('Old work');
  await call('updateWork', { body: { description: 'Les chiffres de l’été, relus' } });
  const request = async (workId: string, title: string, recipient: string, dueInDays?: number) =>
    idOf(
      await call('createRequest', {
        path: { work_id: workId },
        body: {
          title,
          recipient: { email: recipient, firstName: 'Grace', lastName: 'Hopper' },
          ...(dueInDays !== undefined && { dueAt: daysFromNow(dueInDays) }),
        },
      }),
    );
  ids.id = await request(ids.work_id, 'Rapport été : chiffres', sharedRecipient, 10);
  const path = (id: string, workId = ids.work_id!) => ({ path: { work_id: workId, id } });
  await call('confirmRequest', { ...path(ids.id), body: { answer: 'Les chiffres sont justes.' } });
  await call('validateRequest');
  await call('earlyValidateRequest', path(await request(ids.work_id, 'Confirm Q3 figures', sharedRecipient, 20)));
  await call('cancelRequest', { ...path(await request(ids.work_id, 'Draft figures', email('r3'))), body: {} });
  await request(ids.work_id, 'Still pending', email('r4'), 20);
  const resent = await request(figures, 'Quarterly figures', email('r5'));
  await call('resendRequest', path(resent, figures));
  const answered = await request(figures, 'Answered by its recipient', email('r6'));
  await call('confirmRequest', path(await request(figures, 'Confirmed', email('r7')), figures));
  await call('cancelRequest', path(await request(figures, 'Cancelled', email('r8')), figures));
  await request(old, 'In a discarded work', email('r9'));
  await call('discardWork', { path: { work_id: old } });
  await call('undiscardWork', { path: { work_id: old } });
  await call('discardWork', { path: { work_id: old } });

  // The recipient's side: the answer link, from the dev mailbox the README's start keeps.
  const token = await eventually(
    async () => {
      const res = await fetch(`${server.baseUrl}/dev/mailbox`, { headers: { Authorization: `Bearer ${key('ada')}` } });
      const { messages } = (await res.json()) as { messages: Array<{ to: string; text: string }> };
      const link = /\/r\/([A-Za-z0-9_-]{43})/.exec(messages.find((m) => m.to === email('r6'))?.text ?? '');
      if (!link) throw new Error('no email to the recipient yet');
      return link[1]!;
    },
    { timeoutMs: 30_000, pauseMs: 100 },
  );
  await call('getRecipientRequest', { as: token });
  await call('answerRecipientRequest', { as: token, body: { answer: 'Yes.' } });
  expect((await call('getRequest', path(answered, figures))).body).toMatchObject({ request: { status: 'confirmed' } });

  // Deliveries: every event so far went to the receiver; one is retried.
  ids.delivery_id = await eventually(
    async () => {
      const { edges } = listOf(await call('listWebhookDeliveries', { query: { limit: '100' } }));
      if (edges.length < 2) throw new Error('fewer than two deliveries yet');
      return edges.at(-1)!.node.id!;
    },
    { timeoutMs: 30_000, pauseMs: 100 },
  );
  await call('retryWebhookDelivery');
  await call('deleteWebhookEndpoint', { path: { endpoint_id: spareEndpoint } });
  await call('revokeApiKey');

  // Signing in by email, as a newcomer does in the console on the first run: three sessions from three emailed
  // links (the dev mailbox), one of them ended, so that two are left to page through.
  const usedLinks = new Set<string>();
  const sessionIds: string[] = [];
  for (let i = 0; i < 3; i++) {
    await call('createSignIn', { body: { email: email('ada') } });
    const signInToken = await eventually(
      async () => {
        const res = await fetch(`${server.baseUrl}/dev/mailbox`, {
          headers: { Authorization: `Bearer ${key('ada')}` },
        });
        const { messages } = (await res.json()) as { messages: Array<{ to: string; text: string }> };
        const links = messages
          .filter((m) => m.to === email('ada'))
          .flatMap((m) => [...m.text.matchAll(/#token=([A-Za-z0-9_-]+)/g)].map((match) => match[1]!));
        const fresh = links.find((link) => !usedLinks.has(link));
        if (!fresh) throw new Error('no new sign-in email yet');
        return fresh;
      },
      { timeoutMs: 30_000, pauseMs: 100 },
    );
    usedLinks.add(signInToken);
    const created = await call<{ session: { id: string } }>('createSession', { body: { token: signInToken } });
    sessionIds.push(created.body.session.id);
  }
  await call('revokeSession', { path: { session_id: sessionIds[0]! } });

  // Whatever the tour does not call yet (a new operation): with the ids and example body the contract gives.
  const refused = new Map<string, string>();
  for (const operationId of tour.missing())
    await call(operationId).catch((error: Error) => refused.set(operationId, error.message));
  expect(tour.missing().map((operationId) => `${operationId}: ${refused.get(operationId)}`)).toEqual([]);
  const takes = (header: string) =>
    operations.filter((o) => o.parameters.some((p) => p.name === header)).map((o) => o.operationId);
  expect([...tour.ifMatched].sort()).toEqual(takes('If-Match').sort());
  expect([...tour.replayed].sort()).toEqual(takes('Idempotency-Key').sort());
  console.log(`first-run (${database.kind}): ${tour.recorder.calls.length} calls in ${seconds(since)}`);
}, 180_000);

/** The reads of the query forms, to make again after the restart. */
let formReads: Read[] = [];

it('answers every form of every query parameter, lists of values included, and pages through each', async () => {
  // Mail and webhooks first settle, so that every read below is what a later one must find again.
  await eventually(
    async () => {
      const requests = listOf(await tour.call('listTenantRequests', { query: { limit: '100' } })).edges;
      const deliveries = listOf(await tour.call('listWebhookDeliveries', { query: { limit: '100' } })).edges;
      if (requests.some(({ node }) => (node.emailDelivery as { status?: string })?.status === 'queued'))
        throw new Error('an email still queued');
      if (deliveries.some(({ node }) => node.status !== 'delivered')) throw new Error('a delivery not delivered');
    },
    { timeoutMs: 60_000, pauseMs: 200 },
  );
  const since = Date.now();
  const firstRead = tour.reads.length;
  const { ids } = tour;
  const values: Record<string, string[]> = {
    'date-time': [daysFromNow(15), withOffset(daysFromNow(5), 2), daysFromNow(30).replace('.000Z', '.123456Z')],
    recipient: [sharedRecipient, sharedRecipient.toUpperCase()],
    workId: [ids.work_id!, ids.work_id!.toUpperCase(), '0193a1b2-7c3d-7e4f-8a9b-0c1d2e3f4a5b'],
    q: ['rapport', 'RAPPORT ete', 'figures quarterly', 'nothing-matches'],
  };
  // Who has something to list: the invitations mary never answered.
  const callers: Record<string, string> = { listMyInvitations: 'mary' };
  const withoutValues: string[] = [];
  const paged = new Set<string>();
  let forms = 0;
  for (const { operation, parameters } of queryFormsByOperation(values)) {
    const as = callers[operation.operationId] && key(callers[operation.operationId]!);
    const read = async (query: Record<string, string>) =>
      listOf(await tour.call(operation.operationId, { ...(as && { as }), query }));
    const queries: Array<Record<string, string>> = [{}];
    for (const { parameter, forms: found } of parameters) {
      if (!found) withoutValues.push(`${operation.operationId} ?${parameter.name}`);
      for (const { value } of found ?? []) queries.push({ [parameter.name]: value });
    }
    // Every parameter at once, each in its widest form.
    queries.push(
      Object.fromEntries(
        parameters
          .filter(({ forms: found }) => found?.length)
          .map(({ parameter, forms: found }) => [
            parameter.name,
            (found!.find((f) => f.form === 'every value') ?? found![0]!).value,
          ]),
      ),
    );
    for (const query of queries) {
      forms++;
      await read(query);
      if (!parameters.some(({ parameter }) => parameter.name === 'after')) continue;
      // The same list a page at a time: the cursor of the first page opens the second.
      const first = await read({ ...query, limit: '1' });
      if (!first.pageInfo.hasNextPage) continue;
      const next = await read({ ...query, limit: '1', after: first.pageInfo.endCursor! });
      expect(next.edges).toHaveLength(1);
      expect(next.edges[0]!.node).not.toEqual(first.edges[0]!.node);
      paged.add(operation.operationId);
    }
    // A list of values finds what its values find one by one (statuses, event types: each item is one of them).
    for (const { parameter, forms: found } of parameters) {
      const every = found?.find((f) => f.form === 'every value');
      if (!every) continue;
      const all = await read({ [parameter.name]: every.value });
      if (all.totalCountCapped) continue;
      const each = await Promise.all(
        found!.filter((f) => f.form.startsWith('the value ')).map((f) => read({ [parameter.name]: f.value })),
      );
      expect(each.filter((list) => list.totalCount > 0).length).toBeGreaterThanOrEqual(2);
      expect(all.totalCount).toBe(each.reduce((sum, list) => sum + list.totalCount, 0));
    }
  }
  expect(withoutValues).toEqual([]);
  // listSessions pages in sessions.test.ts; here the tour's sessions do not yet make a second page (left open).
  const lists = operations
    .filter((o) => o.parameters.some((p) => p.name === 'after') && o.operationId !== 'listSessions')
    .map((o) => o.operationId);
  expect([...paged].sort()).toEqual(lists.sort());
  formReads = tour.reads.slice(firstRead);
  console.log(
    `first-run (${database.kind}): ${forms} query forms of ${lists.length} lists, ${formReads.length} reads in ${seconds(since)}`,
  );
}, 180_000);

it('answers If-None-Match with 304 on every read that takes it', async () => {
  const reads = operations.filter((o) => o.parameters.some((p) => p.name === 'If-None-Match'));
  for (const { operationId } of reads) {
    const etag = (await tour.call(operationId)).headers.get('ETag')!;
    await tour.call(operationId, { headers: { 'If-None-Match': etag }, expect: 304 });
  }
  expect(reads.length).toBeGreaterThan(0);
}, 60_000);

it(`fuzz: ${RUNS} valid and ${RUNS} invalid generated requests per operation, no 5xx, every answer as the contract says`, async () => {
  const since = Date.now();
  await loadFaker();
  const fixtures = await fuzzFixtures(tour, { person, webhookUrl: receiver.url, adminToken: ADMIN_TOKEN });
  const tally = new Map<string, number>();
  const exercise = async (operation: Operation, request: FuzzRequest) => {
    const outcome = `${request.kind} ${await sendFuzzed(server.baseUrl, operation, request)}`;
    tally.set(outcome, (tally.get(outcome) ?? 0) + 1);
  };
  for (const [index, operation] of operations.entries()) {
    await fc.assert(
      fc.asyncProperty(validRequest(operation, fixtures), ({ request }) => exercise(operation, request)),
      { seed: SEED + index * 2, numRuns: RUNS, endOnFailure: true },
    );
    await fc.assert(
      fc.asyncProperty(invalidRequest(operation, fixtures), (request) => exercise(operation, request)),
      { seed: SEED + index * 2 + 1, numRuns: RUNS, endOnFailure: true },
    );
  }
  console.log(
    `first-run (${database.kind}): fuzz seed ${SEED} (replay with FUZZ_SEED=${SEED}), ${RUNS} runs per operation and kind, ${seconds(since)}; outcomes ${JSON.stringify(Object.fromEntries([...tally].sort()))}`,
  );
}, 600_000);

it('answers every read of the query forms, and every keyed creation, the same after a restart on the same data', async () => {
  expect(formReads.length).toBeGreaterThan(0);
  const since = Date.now();
  server.child.kill('SIGTERM');
  expect((await server.exited).code).toBe(0);
  const stopped = seconds(since);
  server = await start();
  const restarted = seconds(since);
  expect(server.lines.some((line) => line.msg === 'database migrations applied')).toBe(false);
  tour.moveTo(server.baseUrl);
  // What changes by itself: when a key was last used (kept to the minute).
  const settled = (answer: Answer) =>
    JSON.stringify(answer.body, (name: string, value: unknown) => (name === 'lastUsedAt' ? undefined : value));
  const differ: string[] = [];
  const distinct = new Map(formReads.map((read) => [JSON.stringify([read.operationId, read.init]), read]));
  for (const { operationId, init, answer } of distinct.values()) {
    const again = await tour.call(operationId, init);
    if (again.status !== answer.status || settled(again) !== settled(answer))
      differ.push(`${operationId} ${JSON.stringify(init.query)}: ${settled(answer)} then ${settled(again)}`);
  }
  // Every keyed creation replayed as it was, secrets included: what the first run sealed, it opens after a restart.
  for (const { operationId, init, answer } of tour.keyed) {
    const again = await tour.call(operationId, { ...init, expect: answer.status });
    if (settled(again) !== settled(answer)) differ.push(`${operationId} replayed otherwise after the restart`);
  }
  expect(tour.keyed.length).toBeGreaterThan(0);
  expect(differ).toEqual([]);
  console.log(
    `first-run (${database.kind}): stopped in ${stopped}, listening again at ${restarted}, ${distinct.size} reads made again at ${seconds(since)}`,
  );
}, 180_000);
