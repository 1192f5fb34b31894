import { Client } from 'pg';
import { openDatabase, parseEncryptionKeys } from '@works-api/prisma';
import { startTestServer, TEST_ENCRYPTION_KEYS, type TestServer } from '../support/server';

/**
 * The pool's statement timeout (DATABASE_STATEMENT_TIMEOUT_MS): a statement stuck behind a lock, or just slow, is
 * cut off by PostgreSQL and answered 503 `service_unavailable` with Retry-After (never a 500), and its connection
 * goes back to the pool. PGlite accepts the setting but never enforces it, so this runs on PostgreSQL only.
 */
const url = process.env.DATABASE_URL;
const onPostgres = url ? describe : describe.skip;
if (!url)
  console.log('statement-timeout: PostgreSQL only (PGlite does not enforce statement_timeout); set DATABASE_URL');

onPostgres('statement timeout on the pool (PostgreSQL)', () => {
  let server: TestServer;
  let locker: Client;

  beforeAll(async () => {
    const database = await openDatabase({
      kind: 'postgres',
      url: url!,
      statementTimeoutMs: 300,
      encryptionKeys: parseEncryptionKeys(TEST_ENCRYPTION_KEYS),
    });
    server = await startTestServer({ database });
    locker = new Client({ connectionString: url });
    await locker.connect();
  });
  afterAll(async () => {
    await locker?.end();
    await server?.close();
  });

  it('answers 503 service_unavailable with Retry-After when a statement runs past it, and serves again after', async () => {
    const ada = await server.createUser('ada');
    const created = await server.call('/v1/tenants', { method: 'POST', apiKey: ada.apiKey, json: { name: 'Locked' } });
    const tenantId = (await created.json()).tenant.id;

    // Another session holds the tenant's row: the rename's UPDATE waits for it until the timeout cancels it.
    await locker.query('BEGIN');
    await locker.query('SELECT id FROM tenants WHERE id = $1 FOR UPDATE', [tenantId]);
    // Without a timeout the rename would wait for the lock for good: release it after 20 s so the test fails, not hangs.
    const safety = setTimeout(() => void locker.query('ROLLBACK'), 20_000);
    try {
      const rename = () =>
        server.call(`/v1/tenants/${tenantId}`, { method: 'PATCH', apiKey: ada.apiKey, json: { name: 'Renamed' } });
      const refused = await rename();
      expect(refused.status).toBe(503);
      expect(refused.headers.get('retry-after')).toBe('5');
      expect(await refused.json()).toMatchObject({
        code: 'service_unavailable',
        detail: expect.stringMatching(/did not answer in time; nothing was changed/),
      });
      // Every connection the pool lent out came back: more concurrent refusals than the pool has connections.
      const again = await Promise.all(Array.from({ length: 12 }, rename));
      expect(again.map((res) => res.status)).toEqual(Array(12).fill(503));
    } finally {
      clearTimeout(safety);
      await locker.query('ROLLBACK');
    }
    const renamed = await server.call(`/v1/tenants/${tenantId}`, {
      method: 'PATCH',
      apiKey: ada.apiKey,
      json: { name: 'Renamed' },
    });
    expect(renamed.status).toBe(200);
    expect(server.logs.some((line) => line.msg === 'database statement timeout: answered 503')).toBe(true);
    expect(server.bugs).toEqual([]);
  });
});
