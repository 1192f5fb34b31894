import { spawn } from 'node:child_process';
import { PGlite } from '@electric-sql/pglite';
import { PGLITE_EXTENSIONS } from '@works-api/prisma';
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createClient, verifyWebhook } from '@works-api/client';
import { Client } from 'pg';
import { openDatabase } from '@works-api/prisma';
import { createRequest, createTenant, createWork, ok } from '../support/fixtures';
import { lockPgliteFolder } from '@works-api/prisma';
import { keyIdOf, parseEncryptionKeys } from '@works-api/prisma';
import { newPgliteFolder, removeDataDirs, TEST_NODE_ARGS } from '../support/process';
import { type Receiver, startReceiver } from '../support/receiver';
import { startTestServer, type TestServer, type TestUser } from '../support/server';

/**
 * `pnpm db:dump` / `pnpm db:restore` (prisma/dist/db-tools.js): a populated embedded database moved to PostgreSQL and
 * back (PGlite → PostgreSQL → PGlite; PGlite → PGlite → PGlite when no DATABASE_URL is set), then proven the same:
 * every table's rows, and through the API the same tenant, works, requests and events, the same API key accepted,
 * the same webhook secret signing, the same idempotency key replaying.
 */
const TOOLS = path.resolve(__dirname, '../../../../prisma/dist/db-tools.js');
const scratch = mkdtempSync(path.join(tmpdir(), 'works-api-dumps-'));
const file = (name: string) => path.join(scratch, name);

function tools(
  args: string[],
  where: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [...TEST_NODE_ARGS, TOOLS, ...args], {
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
/** The key the first test's dumps are sealed with (its source folder's). */
let dumpKey = '';
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
  // Secrets are sealed with the embedded database's key (beside its folder), which the header names; the file
  // holds neither the webhook secret nor the key.
  const sourceKey = readFileSync(`${source}.key`, 'utf8').trim();
  dumpKey = sourceKey;
  const dumpText = readFileSync(file('from-pglite.sql'), 'utf8');
  const keyId = keyIdOf(parseEncryptionKeys(sourceKey)[0]!);
  expect(dumpText).toContain(`"secrets":{"sealedWith":"aes-256-gcm","keyIds":["${keyId}"]}`);
  expect(dumpText).not.toContain(secret!.slice('whsec_'.length));
  expect(dumpText).not.toContain(sourceKey);
  let middle: Record<string, string>;
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
  // Without the source's key the restore stops before it writes anything, naming the key.
  const keyless = await tools(['restore', file('from-pglite.sql')], {
    ...middle,
    ENCRYPTION_KEYS: Buffer.alloc(32, 9).toString('base64'),
  });
  expect(keyless.code).toBe(1);
  expect(keyless.stderr).toContain(`sealed with key ${keyId}, which this deployment's ENCRYPTION_KEYS does not hold`);
  middle = { ...middle, ENCRYPTION_KEYS: sourceKey };
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
  const intoCopy = await tools(['restore', file('from-middle.sql')], {
    PGLITE_DIR: target,
    ENCRYPTION_KEYS: sourceKey,
  });
  expect(intoCopy.code).toBe(0);
  expect((await tools(['dump', file('from-copy.sql')], { PGLITE_DIR: target, ENCRYPTION_KEYS: sourceKey })).code).toBe(
    0,
  );
  // Every table's rows, value for value.
  expect(rowsOf(file('from-copy.sql'))).toBe(rowsOf(file('from-pglite.sql')));

  // 4. Through the API, on the copy: the same data, key, secret and idempotency key.
  const copy = await startTestServer({
    database: await openDatabase({ kind: 'pglite', dataDir: target, encryptionKeys: parseEncryptionKeys(sourceKey) }),
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

it('creates the dump exclusively with mode 0600, never through a symlink, and replaces a file only with --force', async () => {
  // A migrated embedded folder (migrated here: without DATABASE_URL's template run it starts empty).
  const folder = { PGLITE_DIR: await newPgliteFolder() };
  await (await openDatabase({ kind: 'pglite', dataDir: folder.PGLITE_DIR })).close();
  const out = file('exclusive.sql');
  const partial = `${out}.partial`;
  const victim = file('victim.txt');
  writeFileSync(victim, 'not yours');
  const victimUntouched = () => {
    expect(readFileSync(victim, 'utf8')).toBe('not yours');
    expect(statSync(victim).mode & 0o777).toBe(0o644);
  };
  chmodSync(victim, 0o644);

  // A world-readable partial file in the way is neither written through nor reused with its mode.
  writeFileSync(partial, 'left over');
  chmodSync(partial, 0o644);
  const blocked = await tools(['dump', out], folder);
  expect(blocked.code).toBe(1);
  expect(blocked.stderr).toContain(`${partial} exists`);
  expect(readFileSync(partial, 'utf8')).toBe('left over');
  // Nor a symlink there, pointing at someone else's file.
  rmSync(partial);
  symlinkSync(victim, partial);
  expect((await tools(['dump', out], folder)).code).toBe(1);
  victimUntouched();
  // --force removes the link itself; the dump is a new file, 0600, whatever the old one was.
  const forced = await tools(['dump', out, '--force'], folder);
  expect(forced.stderr).toBe('');
  victimUntouched();
  expect(existsSync(partial)).toBe(false);
  expect(statSync(out).mode & 0o777).toBe(0o600);
  expect(readFileSync(out, 'utf8')).toContain('-- works-api-dump-end: ');

  // An existing dump is kept unless told.
  const written = readFileSync(out, 'utf8');
  const again = await tools(['dump', out], folder);
  expect(again.code).toBe(1);
  expect(again.stderr).toContain(`${out} exists: pass --force to replace it`);
  expect(readFileSync(out, 'utf8')).toBe(written);

  // A symlink where the dump goes: refused, and with --force replaced by the dump, its target untouched.
  const link = file('link.sql');
  symlinkSync(victim, link);
  expect((await tools(['dump', link], folder)).code).toBe(1);
  expect((await tools(['dump', link, '--force'], folder)).code).toBe(0);
  victimUntouched();
  expect(lstatSync(link).isSymbolicLink()).toBe(false);
  expect(statSync(link).mode & 0o777).toBe(0o600);
});

it('rebuilds the kept counts after a restore, and on demand with db:recount', async () => {
  // A dump whose counts do not match its rows (edited by hand here; a pg_dump taken without one snapshot can be).
  const dump = readFileSync(file('from-pglite.sql'), 'utf8');
  const block = /COPY public\."tenant_counts" \([^)]*\) FROM stdin;\n([^\n]+)\n/.exec(dump);
  expect(block).not.toBeNull();
  const [tenantId, ...counts] = block![1]!.split('\t');
  const wrong = dump.replace(block![1]!, [tenantId, '999', ...counts.slice(1)].join('\t'));
  writeFileSync(file('wrong-counts.sql'), wrong);
  const folder = { PGLITE_DIR: path.join(scratch, 'recounted'), ENCRYPTION_KEYS: dumpKey };
  const restored = await tools(['restore', file('wrong-counts.sql')], folder);
  expect(restored.stderr).toBe('');
  expect(restored.stdout).toMatch(/, then corrected 1 counter rows:/);
  expect((await tools(['recount'], folder)).stdout).toMatch(/every count was right\.\n$/);

  // A count gone wrong in place (as a bug would leave it): the command finds and corrects it.
  const pglite = new PGlite(folder.PGLITE_DIR, { extensions: PGLITE_EXTENSIONS });
  try {
    await pglite.query('UPDATE tenant_counts SET members = 42 WHERE tenant_id = $1::uuid', [tenantId]);
  } finally {
    await pglite.close();
  }
  const recounted = await tools(['recount'], folder);
  expect(recounted.stderr).toBe('');
  expect(recounted.stdout).toMatch(
    /^Recounted embedded PGlite in .*: 1 counter rows were wrong and are now right\.\n$/,
  );
  expect((await tools(['recount', 'extra'], folder)).stderr).toMatch(/usage: .*pnpm db:recount/);
}, 120_000);
