import { Client } from 'pg';
import { type Database, openDatabase } from '@works-api/prisma';
import { isDatabaseOutage } from '@works-api/prisma';
import { sendStatement } from '@works-api/prisma';
import { parseEncryptionKeys } from '@works-api/prisma';
import { eventually } from '../support/load';
import { type OwnPostgres, ownPostgresUnavailable, startOwnPostgres } from '../support/own-postgres';
import { startTestServer, TEST_ENCRYPTION_KEYS } from '../support/server';

/**
 * With synchronous replication (deploy/ha/), a commit waits until a standby has it. If that wait is cancelled (the
 * pool's statement timeout, while a new leader waits for a standby to reconnect after a failover), PostgreSQL
 * still reports the COMMIT as a success, with only a WARNING: the transaction is on the leader alone, and the next
 * failover can lose it. The server must not acknowledge such a write: it is an error, answered 503, and the
 * connection is dropped. On a PostgreSQL of the test's own whose synchronous standby never comes (the shared
 * server's settings are never touched).
 */
const unavailable = ownPostgresUnavailable();
if (unavailable) console.log(`synchronous-commit: skipped: ${unavailable}`);
const withOwnPostgres = unavailable ? describe.skip : describe;

withOwnPostgres('a commit the synchronous standby never confirms', () => {
  let postgres: OwnPostgres;
  let admin: Client;
  let database: Database;
  beforeAll(async () => {
    postgres = await startOwnPostgres();
    database = await openDatabase({
      kind: 'postgres',
      url: postgres.url,
      statementTimeoutMs: 300,
      encryptionKeys: parseEncryptionKeys(TEST_ENCRYPTION_KEYS),
    });
    admin = new Client({ connectionString: postgres.url });
    await admin.connect();
    await admin.query('CREATE TABLE ledger (id int PRIMARY KEY)');
  });
  afterAll(async () => {
    await admin?.end();
    await database?.close();
    await postgres?.destroy();
  });

  /** From now on every commit waits for a standby that never connects, as on a leader left without one. */
  const awaitAStandbyThatNeverComes = async () => {
    await admin.query(`ALTER SYSTEM SET synchronous_standby_names = 'never_connects'`);
    await admin.query('SELECT pg_reload_conf()');
    // The postmaster passes the reload on to every session by itself, a moment later: until the pool's has it.
    await eventually(async () =>
      expect(await sendStatement(database, `SELECT current_setting('synchronous_standby_names') AS names`, {})).toEqual(
        [{ names: 'never_connects' }],
      ),
    );
  };
  /** The standby is back (here: no synchronous standby asked for any more); waiting commits complete. */
  const standbyBack = async () => {
    await admin.query('ALTER SYSTEM RESET synchronous_standby_names');
    await admin.query('SELECT pg_reload_conf()');
  };
  afterEach(standbyBack);
  const backendPid = async () =>
    (await sendStatement<{ pid: number }>(database, 'SELECT pg_backend_pid() AS pid', {}))[0]!.pid;

  it('is an error (an outage), not a success, and its connection is not reused', async () => {
    const server = await startTestServer({ database, keepDatabase: true });
    try {
      const user = await server.createUser('sync');
      await awaitAStandbyThatNeverComes();

      const pid = await backendPid();
      const error = await sendStatement(database, 'INSERT INTO ledger VALUES (1)', {}).catch((e: unknown) => e);
      expect(isDatabaseOutage(error)).toBe(true);
      expect(error).toMatchObject({ code: '08007' });
      // Committed on this server alone, which is exactly why it must not count as acknowledged.
      expect((await admin.query('SELECT id FROM ledger')).rows).toEqual([{ id: 1 }]);
      expect(await backendPid()).not.toBe(pid);

      // Through the API: 503 with Retry-After, within the statement timeout, never a 201 or a 500.
      const started = performance.now();
      const created = await server.callAs(user, 'POST', '/v1/tenants', { name: 'Unconfirmed' });
      expect(created.status).toBe(503);
      expect(created.headers.get('retry-after')).toBe('5');
      expect(performance.now() - started).toBeLessThan(5_000);
      expect(server.bugs).toEqual([]);
    } finally {
      await server.close();
    }
  });

  it('gives back an Idempotency-Key whose claim committed unconfirmed, once the standby is back: no minute of 409', async () => {
    const server = await startTestServer({ database, keepDatabase: true });
    try {
      const user = await server.createUser('claim');
      expect((await server.callAs(user, 'GET', '/v1/me')).status).toBe(200); // its key's last use is written now
      await awaitAStandbyThatNeverComes();
      const create = () =>
        server.callAs(user, 'POST', '/v1/tenants', { name: 'Claimed' }, { 'Idempotency-Key': 'unconfirmed-claim' });
      // The key's claim is the first write: committed on this server, unconfirmed, answered 503.
      expect((await create()).status).toBe(503);
      expect((await admin.query(`SELECT 1 FROM idempotency_keys WHERE key = 'unconfirmed-claim'`)).rowCount).toBe(1);
      await standbyBack();
      await eventually(async () => expect((await create()).status).toBe(201), { timeoutMs: 5_000, pauseMs: 200 });
      expect(server.bugs).toEqual([]);
    } finally {
      await server.close();
    }
  });
});
