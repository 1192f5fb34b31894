import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createClient, verifyWebhook } from '@works-api/client';
import { Client } from 'pg';
import { openDatabase } from '../../src/db/client';
import { createRequest, createTenant, createWork, ok } from '../support/fixtures';
import { lockPgliteFolder } from '../../src/db/pglite-lock';
import { newPgliteFolder, removeDataDirs } from '../support/process';
import { type Receiver, startReceiver } from '../support/receiver';
import { startTestServer, type TestServer, type TestUser } from '../support/server';

/**
 * `pnpm db:dump` / `pnpm db:restore` (dist/db-tools.js): a populated embedded database moved to PostgreSQL and
 * back (PGlite → PostgreSQL → PGlite; PGlite → PGlite → PGlite when no DATABASE_URL is set), then proven the same:
 * every table's rows, and through the API the same tenant, works, requests and events, the same API key accepted,
 * the same webhook secret signing, the same idempotency key replaying.
 */
const TOOLS = path.resolve(__dirname, '../../dist/db-tools.js');
const scratch = mkdtempSync(path.join(tmpdir(), 'works-api-dumps-'));
const file = (name: string) => path.join(scratch, name);

function tools(
  args: string[],
  where: { PGLITE_DIR: string } | { DATABASE_URL: string },
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [TOOLS, ...args], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...where },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, stdout, stderr })));
}

/** A dump's rows (every COPY block), without its header: two dumps of the same data compare equal. */
const rowsOf = (dump: string) =>
  readFileSync(dump, 'utf8')
    .split('\n')
    .filter((line) => !line.startsWith('--'))
    .join('\n');

let receiver: Receiver;
const pgUrl = process.env.DATABASE_URL;
let pgDatabase: string | undefined;
beforeAll(async () => (receiver = await startReceiver()));
afterAll(async () => {
  await receiver.close();
  if (pgUrl && pgDatabase) await admin(pgUrl, `DROP DATABASE IF EXISTS "${pgDatabase}"`);
  removeDataDirs();
  rmSync(scratch, { recursive: true, force: true });
});

async function admin(url: string, sql: string): Promise<void> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** Everything a partner sees of the data, read through the API. */
async function apiView(server: TestServer, apiKey: string, tenantId: string) {
  const get = async (url: string) => {
    const res = await server.call(url, { apiKey });
    expect(res.status).toBe(200);
    return { etag: res.headers.get('etag'), body: (await res.json()) as unknown };
  };
  const works = (await get(`/v1/tenants/${tenantId}/works?discarded=all`)).body as {
    works: { edges: Array<{ node: { id: string } }> };
  };
  const perWork = [];
  for (const { node } of works.works.edges) {
    const requests = (await get(`/v1/tenants/${tenantId}/works/${node.id}/requests`)).body as {
      requests: { edges: Array<{ node: { id: string } }> };
    };
    const events = [];
    for (const request of requests.requests.edges)
      events.push(await get(`/v1/tenants/${tenantId}/works/${node.id}/requests/${request.node.id}/events`));
    perWork.push({ requests, events });
  }
  return {
    me: await get('/v1/me'),
    tenant: await get(`/v1/tenants/${tenantId}`),
    members: await get(`/v1/tenants/${tenantId}/members`),
    works,
    perWork,
    // lastUsedAt moves with every use of the key, this very read included (the rows above compare it exactly).
    apiKeys: JSON.stringify((await get('/v1/api-keys')).body).replace(/"lastUsedAt":"[^"]*"/g, ''),
    endpoints: await get(`/v1/tenants/${tenantId}/webhook-endpoints`),
  };
}

it('moves a populated database PGlite → PostgreSQL → PGlite and nothing changes', async () => {
  // 1. A populated embedded database, written through the API.
  const source = await newPgliteFolder();
  const first = await startTestServer({
    database: await openDatabase({ kind: 'pglite', dataDir: source }),
    webhooks: { manual: true },
  });
  let owner: TestUser;
  let tenantId: string;
  let secret: string;
  const idempotent = { key: 'move-me-once', body: { name: 'Idempotent Inc' } };
  let firstAnswer: unknown;
  let before: Awaited<ReturnType<typeof apiView>>;
  try {
    owner = await first.createUser('owner');
    const member = await first.createUser('member');
    const tenant = await createTenant(owner, 'Moving Inc');
    tenantId = tenant.id;
    ok(
      await owner.client.POST('/tenants/{tenant_id}/members', {
        params: { path: { tenant_id: tenantId } },
        body: { email: member.email, role: 'admin' },
      }),
    );
    secret = ok(
      await owner.client.POST('/tenants/{tenant_id}/webhook-endpoints', {
        params: { path: { tenant_id: tenantId } },
        body: { url: receiver.url },
      }),
    ).webhookEndpoint.secret;
    const work = await createWork(owner, tenantId, 'Thesis');
    const discarded = await createWork(owner, tenantId, 'Old draft');
    const confirmed = await createRequest(owner, tenantId, work.id);
    await createRequest(owner, tenantId, work.id); // stays pending
    const path = { tenant_id: tenantId, work_id: work.id, id: confirmed.id };
    ok(await owner.client.PUT('/tenants/{tenant_id}/works/{work_id}/requests/{id}/confirm', { params: { path } }));
    ok(await owner.client.PUT('/tenants/{tenant_id}/works/{work_id}/requests/{id}/validate', { params: { path } }));
    ok(
      await owner.client.DELETE('/tenants/{tenant_id}/works/{work_id}', {
        params: { path: { tenant_id: tenantId, work_id: discarded.id } },
      }),
    );
    const created = await first.call('/v1/tenants', {
      method: 'POST',
      apiKey: owner.apiKey,
      headers: { 'Idempotency-Key': idempotent.key },
      json: idempotent.body,
    });
    expect(created.status).toBe(201);
    firstAnswer = await created.json();
    await first.dispatcher!.runOnce(); // webhook events, deliveries and their attempts are in the data too
    expect(receiver.received.length).toBeGreaterThan(0);
    before = await apiView(first, owner.apiKey, tenantId);
  } finally {
    await first.close();
  }

  // 2. While a server holds the folder (its lock, taken here as a server takes it) the dump says so.
  const held = lockPgliteFolder(source);
  const refused = await tools(['dump', file('held.sql')], { PGLITE_DIR: source });
  held.release();
  expect(refused.code).toBe(1);
  expect(refused.stderr).toMatch(
    new RegExp(`cannot dump: .* is in use by another works-api process \\(pid ${process.pid}`),
  );
  expect(existsSync(file('held.sql'))).toBe(false);

  // 3. PGlite → PostgreSQL (or another PGlite) → a new PGlite folder.
  const dumped = await tools(['dump', file('from-pglite.sql')], { PGLITE_DIR: source });
  expect(dumped.stderr).toBe('');
  expect(dumped.stdout).toMatch(/^Dumped embedded PGlite in .* to .*from-pglite\.sql/);
  expect(dumped.stdout).toMatch(/request_events\s+2\n/); // confirmed, validated
  let middle: { PGLITE_DIR: string } | { DATABASE_URL: string };
  if (pgUrl) {
    pgDatabase = `${new URL(pgUrl).pathname.slice(1)}_restore_${process.pid}`;
    await admin(pgUrl, `DROP DATABASE IF EXISTS "${pgDatabase}"`);
    await admin(pgUrl, `CREATE DATABASE "${pgDatabase}"`);
    const url = new URL(pgUrl);
    url.pathname = `/${pgDatabase}`;
    middle = { DATABASE_URL: url.toString() };
  } else {
    middle = { PGLITE_DIR: path.join(scratch, 'middle') }; // a folder that does not exist yet
  }
  const intoMiddle = await tools(['restore', file('from-pglite.sql')], middle);
  expect(intoMiddle.stderr).toBe('');
  expect(intoMiddle.stdout).toMatch(/^Restored .* \(from pglite, .*, migrations up to \d+_\w+\) into /);
  expect(intoMiddle.stdout).toMatch(/users\s+2\n/);
  expect((await tools(['dump', file('from-middle.sql')], middle)).code).toBe(0);
  expect(rowsOf(file('from-middle.sql'))).toBe(rowsOf(file('from-pglite.sql')));
  // A target that holds data is refused, unless told.
  const again = await tools(['restore', file('from-pglite.sql')], middle);
  expect(again.code).toBe(1);
  expect(again.stderr).toMatch(/already holds data \(in users, .*\).*--force/);
  const forced = await tools(['restore', file('from-pglite.sql'), '--force'], middle);
  expect(forced.stderr).toBe('');
  expect(forced.stdout).toMatch(/users\s+2\n/);

  const target = await newPgliteFolder(); // migrated and empty, as a server's first start leaves it
  const intoCopy = await tools(['restore', file('from-middle.sql')], { PGLITE_DIR: target });
  expect(intoCopy.code).toBe(0);
  expect((await tools(['dump', file('from-copy.sql')], { PGLITE_DIR: target })).code).toBe(0);
  // Every table's rows, value for value.
  expect(rowsOf(file('from-copy.sql'))).toBe(rowsOf(file('from-pglite.sql')));

  // 4. Through the API, on the copy: the same data, key, secret and idempotency key.
  const copy = await startTestServer({
    database: await openDatabase({ kind: 'pglite', dataDir: target }),
    webhooks: { manual: true },
  });
  try {
    expect(await apiView(copy, owner!.apiKey, tenantId!)).toEqual(before!);
    const replayed = await copy.call('/v1/tenants', {
      method: 'POST',
      apiKey: owner!.apiKey,
      headers: { 'Idempotency-Key': idempotent.key },
      json: idempotent.body,
    });
    expect(replayed.status).toBe(201);
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(await replayed.json()).toEqual(firstAnswer);

    // The same key, on the copy's server.
    const moved: TestUser = {
      ...owner!,
      client: createClient({ baseUrl: copy.baseUrl, apiKey: owner!.apiKey, retry: false }),
    };
    const work = await createWork(moved, tenantId!, 'After the move');
    const request = await createRequest(moved, tenantId!, work.id);
    await copy.dispatcher!.runOnce();
    const last = receiver.received.at(-1)!;
    const event = verifyWebhook(last.body, last.headers, secret!);
    expect(event).toMatchObject({ type: 'request.created' });
    expect(JSON.stringify(event)).toContain(request.id);
  } finally {
    await copy.close();
  }
}, 300_000);

it('refuses a file that is not a complete works-api dump', async () => {
  const folder = { PGLITE_DIR: path.join(scratch, 'never-written') };
  const missing = await tools(['restore', file('no-such.sql')], folder);
  expect(missing.stderr).toMatch(/no such file/);
  const dump = readFileSync(file('from-pglite.sql'), 'utf8');
  const cut = file('cut.sql');
  writeFileSync(cut, dump.slice(0, dump.indexOf('-- works-api-dump-end')));
  const truncated = await tools(['restore', cut], folder);
  expect(truncated.code).toBe(1);
  expect(truncated.stderr).toMatch(/the dump is incomplete/);
  const usage = await tools(['dump'], folder);
  expect(usage.stderr).toMatch(/usage: pnpm db:dump <file>/);
});
