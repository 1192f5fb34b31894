import { randomUUID } from 'node:crypto';
import { secondsUntilNextUtcDay } from '../../src/mail/caps';
import { createTenant, createWork, freshEmail } from '../support/fixtures';
import { daysFromNow } from '../support/clock';
import { startTestServer, type TestServer, type TestUser } from '../support/server';
import { checkResponse } from '../contract/support/contract';

/**
 * Bulk send (issue 41): POST .../works/{work_id}/request-batches creates up to 1,000 requests in one call, all or
 * nothing. Every bad item is named in one 400; a cap refused is a 429 naming it, nothing created; a stopped address
 * gets its request without an email; one Idempotency-Key, one batch; the answer in item order, one
 * `request.created` event per request in that order; the work's and tenant's counts exact at once. Runs on PGlite
 * and, with DATABASE_URL, on PostgreSQL.
 */
const LIMITS = {
  emailsPerRecipientPerDay: 3,
  emailsPerTenantPerDay: 1500,
  emailsPerAddressPerDay: 5,
  emailsPerSenderPerDay: 1_000_000,
};

let server: TestServer;
let ada: TestUser;
let bob: TestUser;

beforeAll(async () => {
  server = await startTestServer({ limits: LIMITS });
  ada = await server.createUser('ada');
  bob = await server.createUser('bob');
});
// The batches queue thousands of emails that no sender here sends: gone before the next file shares this database
// (on PostgreSQL, files run one after another in one database, and a mail sender there would meet them first).
const tenants: string[] = [];
afterAll(async () => {
  await db().mailMessage.deleteMany({ where: { tenantId: { in: tenants }, status: 'queued' } });
  await server.close();
});

const db = () => server.database.prisma;
const future = () => new Date(Date.now() + 7 * 86_400_000).toISOString();

async function freshWork(user = ada) {
  const tenant = await createTenant(user, 'Bulk');
  tenants.push(tenant.id);
  const work = await createWork(user, tenant.id);
  const base = `/v1/tenants/${tenant.id}/works/${work.id}` as const;
  return {
    tenantId: tenant.id,
    workId: work.id,
    batches: `${base}/request-batches` as const,
    requests: `${base}/requests` as const,
  };
}

const items = (n: number, prefix = 'bulk') =>
  Array.from({ length: n }, (_, i) => ({ recipient: { email: freshEmail(`${prefix}${i}`), firstName: `R${i}` } }));

type BatchBody = {
  batch: {
    count: number;
    requests: Array<{
      id: string;
      title: string;
      message: string;
      dueAt: string | null;
      recipient: { email: string; firstName: string };
      emailsStopped: boolean;
      emailDelivery: { status: string } | null;
    }>;
  };
};

const sendBatch = (url: string, body: unknown, headers?: Record<string, string>, who: TestUser = ada) =>
  server.callAs(who, 'POST', url, body, headers) as Promise<{
    status: number;
    body: BatchBody & Record<string, unknown>;
    headers: Headers;
  }>;

async function rowsIn(workId: string) {
  return db().request.count({ where: { workId } });
}

describe('POST .../request-batches', () => {
  it('creates every item in item order, with the defaults an item does not override, and answers 201 with them', async () => {
    const { batches, requests, workId } = await freshWork();
    const dueAt = future();
    const body = {
      defaults: { title: 'Confirm your balance', message: 'Please confirm.', dueAt },
      items: [...items(4), { title: 'Own title', message: 'Own message', recipient: { email: 'OWN@Example.com' } }],
    };
    const res = await sendBatch(batches, body);
    expect(res.status).toBe(201);
    expect(res.headers.get('location')).toBe(requests);
    const created = res.body.batch.requests;
    expect(res.body.batch.count).toBe(5);
    expect(created.map((r) => r.recipient.email)).toEqual([
      ...body.items.slice(0, 4).map((i) => i.recipient.email),
      'own@example.com',
    ]);
    expect(
      created.slice(0, 4).every((r) => r.title === 'Confirm your balance' && r.message === 'Please confirm.'),
    ).toBe(true);
    expect(created[4]).toMatchObject({ title: 'Own title', message: 'Own message' });
    expect(created.every((r) => r.dueAt === new Date(dueAt).toISOString())).toBe(true);
    expect(created.every((r) => r.emailDelivery?.status === 'queued' && !r.emailsStopped)).toBe(true);
    // Ids time-ordered in item order; each readable as a single create's, one email queued for each.
    expect([...created.map((r) => r.id)].sort()).toEqual(created.map((r) => r.id));
    const one = await server.callAs(ada, 'GET', `${requests}/${created[2]!.id}`);
    expect(one.body).toEqual({ request: created[2] });
    expect(await rowsIn(workId)).toBe(5);
    expect(await db().mailMessage.count({ where: { requestId: { in: created.map((r) => r.id) } } })).toBe(5);
  });

  it('keeps totalCount of the work and of the tenant exact right after the batch', async () => {
    const { batches, requests, tenantId } = await freshWork();
    await sendBatch(batches, { defaults: { title: 'Counted' }, items: items(3) });
    const res = await sendBatch(batches, { defaults: { title: 'Counted' }, items: items(7) });
    expect(res.status).toBe(201);
    const work = await server.callAs(ada, 'GET', `${requests}?limit=1`);
    expect(work.body.requests.totalCount).toBe(10);
    const pending = await server.callAs(ada, 'GET', `${requests}?limit=1&status=pending`);
    expect(pending.body.requests.totalCount).toBe(10);
    const tenant = await server.callAs(ada, 'GET', `/v1/tenants/${tenantId}/requests?limit=1`);
    expect(tenant.body.requests.totalCount).toBe(10);
  });

  it('fires one request.created event per request, in item order, in the events feed', async () => {
    const { batches, tenantId } = await freshWork();
    const res = await sendBatch(batches, { defaults: { title: 'Evented' }, items: items(6) });
    const feed = await server.callAs(ada, 'GET', `/v1/tenants/${tenantId}/events?limit=100`);
    expect(feed.status).toBe(200);
    const created = feed.body.events.edges
      .map((edge) => edge.node)
      .flatMap((node) => (node.type === 'request.created' ? [node.data.request] : []));
    // Newest first: the last item's event first; each the request as the batch answered it.
    expect(created.reverse()).toEqual(res.body.batch.requests);
  });

  it('names every bad item by index and field in one 400, and creates nothing', async () => {
    const { batches, workId } = await freshWork();
    const body = {
      items: [
        { title: 'Good', recipient: { email: freshEmail('good') } },
        { title: 'Bad email', recipient: { email: 'not-an-email' } },
        { recipient: { email: freshEmail('untitled') } }, // no title, none in defaults
        { title: 'Past', recipient: { email: freshEmail('past') }, dueAt: daysFromNow(-3) },
        { title: '   ', recipient: { email: freshEmail('blank') } },
        { title: 'Good too', recipient: { email: freshEmail('good2') } },
        { title: 'No recipient' },
        { title: 'Unknown', recipient: { email: freshEmail('unknown') }, colour: 'red' },
      ],
    };
    const res = await sendBatch(batches, body);
    expect([res.status, res.body.code]).toEqual([400, 'validation_failed']);
    const errors = res.body.errors as Array<{ path: string; message: string }>;
    const paths = errors.map((error) => error.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        '/body/items/1/recipient/email',
        '/body/items/2/title',
        '/body/items/3/dueAt',
        '/body/items/4/title',
        '/body/items/6/recipient',
        '/body/items/7/colour',
      ]),
    );
    expect(paths.some((path) => path.startsWith('/body/items/0/') || path.startsWith('/body/items/5/'))).toBe(false);
    // In item order, each in words.
    const indexes = paths.map((path) => Number(path.split('/')[3]));
    expect([...indexes].sort((a, b) => a - b)).toEqual(indexes);
    expect(errors.find((error) => error.path === '/body/items/3/dueAt')!.message).toBe(
      'items.3.dueAt must be in the future',
    );
    expect(await rowsIn(workId)).toBe(0);
  });

  it('names every bad item when only the server rules find them (the schema passes)', async () => {
    const { batches, workId } = await freshWork();
    const res = await sendBatch(batches, {
      items: [
        { title: 'Fine', recipient: { email: freshEmail('fine') } },
        { recipient: { email: freshEmail('a') } },
        { title: 'Past', recipient: { email: freshEmail('b') }, dueAt: daysFromNow(-400) },
        { recipient: { email: freshEmail('c') } },
      ],
    });
    expect(res.status).toBe(400);
    expect((res.body.errors as Array<{ path: string }>).map((error) => error.path)).toEqual([
      '/body/items/1/title',
      '/body/items/2/dueAt',
      '/body/items/3/title',
    ]);
    expect(await rowsIn(workId)).toBe(0);
  });

  it('names every one of 1,000 bad items (past the usual 100 errors), and up to 10 errors of one item', async () => {
    const { batches, workId } = await freshWork();
    const bad = Array.from({ length: 1000 }, (_, i) =>
      i % 2 === 0
        ? { title: 'Bad email', recipient: { email: `not-an-email-${i}` } }
        : { recipient: { email: freshEmail(`t${i}`) } },
    );
    const res = await sendBatch(batches, { items: bad });
    expect([res.status, res.body.code]).toEqual([400, 'validation_failed']);
    // As a strict partner's validator reads it: the contract allows the 1,000 errors (the server validates only
    // its successful answers).
    await expect(
      checkResponse(
        'POST',
        '/tenants/{tenant_id}/works/{work_id}/request-batches',
        new Response(JSON.stringify(res.body), { status: res.status, headers: res.headers }),
      ),
    ).resolves.toBe('createRequestBatch');
    const paths = (res.body.errors as Array<{ path: string }>).map((error) => error.path);
    expect(paths).toEqual(
      bad.map((_, i) => (i % 2 === 0 ? `/body/items/${i}/recipient/email` : `/body/items/${i}/title`)),
    );
    // An item with 30 unknown properties shows its first 10; the others are still named.
    const unknown = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`extra${i}`, i]));
    const noisy = await sendBatch(batches, {
      defaults: { title: 'Noisy' },
      items: [{ recipient: { email: freshEmail('n0') }, ...unknown }, { recipient: { email: 'nope' } }],
    });
    const noisyPaths = (noisy.body.errors as Array<{ path: string }>).map((error) => error.path);
    expect(noisyPaths.filter((path) => path.startsWith('/body/items/0/'))).toHaveLength(10);
    expect(noisyPaths.at(-1)).toBe('/body/items/1/recipient/email');
    expect(await rowsIn(workId)).toBe(0);
  });

  it('takes 1,000 items and refuses 1,001 (400), and an empty batch', async () => {
    const { batches, workId } = await freshWork();
    const over = await sendBatch(batches, { defaults: { title: 'Too many' }, items: items(1001, 'o') });
    expect([over.status, (over.body.errors as Array<{ path: string }>)[0]!.path]).toEqual([400, '/body/items']);
    const none = await sendBatch(batches, { defaults: { title: 'None' }, items: [] });
    expect(none.status).toBe(400);
    expect(await rowsIn(workId)).toBe(0);
    const full = await sendBatch(batches, {
      defaults: { title: 'A thousand', message: 'x'.repeat(200) },
      items: items(1000, 'k'),
    });
    expect([full.status, full.body.batch?.count]).toEqual([201, 1000]);
    expect(await rowsIn(workId)).toBe(1000);
  }, 60_000);

  it('answers 429 naming the recipient cap, with Retry-After, and creates nothing', async () => {
    const { batches, workId } = await freshWork();
    const email = freshEmail('capped');
    const res = await sendBatch(batches, {
      defaults: { title: 'Capped' },
      items: [
        ...items(2),
        ...Array.from({ length: LIMITS.emailsPerRecipientPerDay + 1 }, () => ({ recipient: { email } })),
      ],
    });
    expect([res.status, res.body.code]).toEqual([429, 'recipient_email_limit_reached']);
    expect(res.body.detail).toContain(`(${email.toLowerCase()}, item 2)`);
    expect(res.body.detail).toContain('nothing was created');
    const retryAfter = Number(res.headers.get('retry-after'));
    expect(Math.abs(retryAfter - secondsUntilNextUtcDay(new Date()))).toBeLessThanOrEqual(5);
    expect(await rowsIn(workId)).toBe(0);
    expect(
      await db().mailMessage.count({
        where: { tenantId: (await db().work.findUniqueOrThrow({ where: { id: workId } })).tenantId },
      }),
    ).toBe(0);
    // Nothing counted either: the same address can still take its three.
    const fine = await sendBatch(batches, {
      defaults: { title: 'Capped' },
      items: Array.from({ length: 3 }, () => ({ recipient: { email } })),
    });
    expect(fine.status).toBe(201);
  });

  it('answers 429 naming the service-wide cap of an address (in any of its forms), across tenants', async () => {
    const first = await freshWork();
    const second = await freshWork();
    const email = freshEmail('everywhere');
    const [local, domain] = email.split('@');
    const thrice = (address: string) => Array.from({ length: 3 }, () => ({ recipient: { email: address } }));
    expect((await sendBatch(first.batches, { defaults: { title: 'A' }, items: thrice(email) })).status).toBe(201);
    const variant = `${local!.toUpperCase()}+tag@${domain}`;
    const over = await sendBatch(second.batches, {
      defaults: { title: 'B' },
      items: [...items(1), ...thrice(variant)],
    });
    expect([over.status, over.body.code]).toEqual([429, 'address_email_limit_reached']);
    expect(over.body.detail).toContain(`(${variant.toLowerCase()}, item 1)`);
    expect(await rowsIn(second.workId)).toBe(0);
    expect(
      (await sendBatch(second.batches, { defaults: { title: 'B' }, items: thrice(variant).slice(0, 2) })).status,
    ).toBe(201);
  });

  it("answers 429 naming the tenant's daily budget, and creates nothing", async () => {
    const { batches, workId } = await freshWork();
    const res = await sendBatch(batches, { defaults: { title: 'Budget' }, items: items(1000, 'b1') });
    expect(res.status).toBe(201);
    const over = await sendBatch(batches, { defaults: { title: 'Budget' }, items: items(501, 'b2') });
    expect([over.status, over.body.code]).toEqual([429, 'tenant_email_budget_exhausted']);
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await rowsIn(workId)).toBe(1000);
  }, 60_000);

  it("never counts past the tenant's budget when batches and single creates race", async () => {
    const { batches, requests, tenantId } = await freshWork();
    const answers = await Promise.all([
      ...Array.from({ length: 5 }, (_, i) =>
        sendBatch(batches, { defaults: { title: 'Raced' }, items: items(350, `race${i}-`) }),
      ),
      ...Array.from({ length: 30 }, (_, i) =>
        server.callAs(ada, 'POST', requests, { title: 'Raced', recipient: { email: freshEmail(`single${i}`) } }),
      ),
    ]);
    const created = answers
      .filter((answer) => answer.status === 201)
      .reduce((sum, answer) => sum + ((answer.body as Partial<BatchBody>).batch?.count ?? 1), 0);
    expect(
      answers.filter((answer) => answer.status !== 201).map((answer) => [answer.status, answer.body.code]),
    ).toEqual(answers.filter((answer) => answer.status !== 201).map(() => [429, 'tenant_email_budget_exhausted']));
    expect(created).toBeLessThanOrEqual(LIMITS.emailsPerTenantPerDay);
    expect(created).toBeGreaterThan(1000);
    expect(await db().mailMessage.count({ where: { tenantId } })).toBe(created);
    expect((await server.callAs(ada, 'GET', `${requests}?limit=1`)).body.requests.totalCount).toBe(created);
  }, 60_000);

  it('creates the request of an address that stopped the tenant’s emails without an email (emailsStopped)', async () => {
    const { batches, tenantId, workId } = await freshWork();
    const stopped = freshEmail('stopped');
    expect(
      (await sendBatch(batches, { defaults: { title: 'First' }, items: [{ recipient: { email: stopped } }] })).status,
    ).toBe(201);
    await db().$executeRaw`UPDATE mail_recipients SET stopped_at = now() WHERE tenant_id = ${tenantId}::uuid`;
    const res = await sendBatch(batches, {
      defaults: { title: 'Second' },
      items: [{ recipient: { email: freshEmail('takes') } }, { recipient: { email: stopped } }],
    });
    expect(res.status).toBe(201);
    const [takes, dropped] = res.body.batch.requests;
    expect([takes!.emailsStopped, takes!.emailDelivery?.status]).toEqual([false, 'queued']);
    expect(dropped).toMatchObject({
      emailsStopped: true,
      emailDelivery: {
        status: 'dropped',
        lastSentAt: null,
        failure: 'The recipient has stopped emails from this tenant.',
      },
    });
    expect(await db().mailMessage.count({ where: { requestId: dropped!.id } })).toBe(0);
    // Its event says so too.
    const event = await db().webhookEvent.findFirstOrThrow({ where: { orderingKey: dropped!.id } });
    expect(JSON.parse(event.body).data.request.emailsStopped).toBe(true);
    expect(await rowsIn(workId)).toBe(3);
  });

  it('replays one Idempotency-Key as one batch: the same answer, nothing created twice; another body is 422', async () => {
    const { batches, workId } = await freshWork();
    const key = `batch-${randomUUID()}`;
    const body = { defaults: { title: 'Keyed' }, items: items(5, 'keyed') };
    const first = await sendBatch(batches, body, { 'Idempotency-Key': key });
    expect(first.status).toBe(201);
    const again = await sendBatch(batches, body, { 'Idempotency-Key': key });
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(await rowsIn(workId)).toBe(5);
    const other = await sendBatch(batches, { ...body, items: items(2, 'other') }, { 'Idempotency-Key': key });
    expect(other.status).toBe(422);
    expect(await rowsIn(workId)).toBe(5);
  });

  it("refuses a keyed batch over a cap whole, naming the address, through the batch's transaction", async () => {
    const { batches, workId } = await freshWork();
    const key = `batch-${randomUUID()}`;
    const email = freshEmail('keyed-cap');
    const body = {
      defaults: { title: 'Keyed cap' },
      items: Array.from({ length: 4 }, () => ({ recipient: { email } })),
    };
    const refused = await sendBatch(batches, body, { 'Idempotency-Key': key });
    expect([refused.status, refused.body.code]).toEqual([429, 'recipient_email_limit_reached']);
    expect(refused.body.detail).toContain(`(${email.toLowerCase()}, item 0)`);
    expect(await rowsIn(workId)).toBe(0);
    // Given back: the same key with a batch the caps take now creates it.
    const fewer = { ...body, items: body.items.slice(0, 3) };
    const later = await sendBatch(batches, fewer, { 'Idempotency-Key': `batch-${randomUUID()}` });
    expect(later.status).toBe(201);
  });

  it('is 404 to a non-member, 409 in a discarded work, and 404 for a missing work', async () => {
    const { batches, tenantId, workId } = await freshWork();
    const body = { defaults: { title: 'Nope' }, items: items(2) };
    expect((await sendBatch(batches, body, undefined, bob)).status).toBe(404);
    expect((await sendBatch(`/v1/tenants/${tenantId}/works/${randomUUID()}/request-batches`, body)).status).toBe(404);
    expect((await server.callAs(ada, 'DELETE', `/v1/tenants/${tenantId}/works/${workId}`)).status).toBe(200);
    const discarded = await sendBatch(batches, body);
    expect([discarded.status, discarded.body.code]).toEqual([409, 'work_discarded']);
    expect(await rowsIn(workId)).toBe(0);
  });

  it('takes a body over 64 KiB (up to 2 MiB) and refuses a larger one with 413', async () => {
    const { batches } = await freshWork();
    const message = 'm'.repeat(4000);
    const big = await sendBatch(batches, {
      defaults: { title: 'Big' },
      items: items(40, 'big').map((item) => ({ ...item, message })),
    });
    expect(big.status).toBe(201);
    const huge = await sendBatch(batches, {
      defaults: { title: 'Huge' },
      items: items(600, 'huge').map((item) => ({ ...item, message })),
    });
    expect([huge.status, huge.body.code]).toEqual([413, 'payload_too_large']);
  });
});
