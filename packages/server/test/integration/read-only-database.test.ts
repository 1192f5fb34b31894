import { type Database, openDatabase } from '@works-api/prisma';
import { isDatabaseOutage, isDatabaseReadOnly } from '@works-api/prisma';
import { sendStatement } from '@works-api/prisma';
import { parseEncryptionKeys } from '@works-api/prisma';
import { eventually } from '../support/load';
import { type ScratchDatabase, scratchDatabase } from '../support/scratch-database';
import { startTestServer, TEST_ENCRYPTION_KEYS } from '../support/server';

/**
 * In a failover the server may reach a PostgreSQL that answers but takes no writes: the old leader, restarted as a
 * standby before the proxy in front notices, or a standby an address still points at. Here a scratch database set
 * `default_transaction_read_only` plays that server (its writes fail with SQLSTATE 25006, as a hot standby's do):
 * writes are answered 503 with Retry-After, never 500; /readyz says the database takes no writes; the pool keeps no
 * connection to a read-only server, so the service is back by itself once the database takes writes again.
 * The real failover is `pnpm ha:check` (deploy/ha/): this proves the mechanisms on every CI run. PostgreSQL only:
 * the pool is what is tested; the embedded database has one connection in the process and no standby.
 */
const url = process.env.DATABASE_URL;
const onPostgres = url ? describe : describe.skip;

onPostgres('a database that takes no writes (a standby, mid-failover)', () => {
  let scratch: ScratchDatabase;
  let database: Database;
  beforeAll(async () => {
    scratch = await scratchDatabase(url!, 'works_read_only');
    database = await openDatabase({
      kind: 'postgres',
      url: scratch.url,
      encryptionKeys: parseEncryptionKeys(TEST_ENCRYPTION_KEYS),
    });
  });
  afterAll(async () => {
    await database?.close();
    await scratch?.drop();
  });
  afterEach(() => scratch.set('default_transaction_read_only', null));

  const backendPid = async () =>
    (await sendStatement<{ pid: number }>(database, 'SELECT pg_backend_pid() AS pid', {}))[0]!.pid;

  /** The server behind the address turns into a standby: every session it starts from now on is read-only. */
  async function demote() {
    await scratch.set('default_transaction_read_only', 'on');
    await scratch.disconnectEveryone({ allowNew: true });
    // The pool drops the connections the server ended (as in a failover, where they die with the old leader).
    await eventually(async () => expect(database.poolStats!().total).toBe(0));
  }

  it('answers writes 503 with Retry-After, fails readiness, and takes writes again by itself', async () => {
    const server = await startTestServer({ database, keepDatabase: true });
    try {
      const user = await server.createUser('standby');
      expect((await server.callAs(user, 'POST', '/v1/tenants', { name: 'Before' })).status).toBe(201);

      await demote();
      const refused = await server.callAs(user, 'POST', '/v1/tenants', { name: 'During' });
      expect(refused.status).toBe(503);
      expect(refused.headers.get('retry-after')).toBe('5');
      expect(refused.body).toMatchObject({
        code: 'service_unavailable',
        detail: 'The database takes no writes right now (it is failing over); retry after 5 seconds.',
      });
      // Logged once the monitor's own ping has confirmed it (prisma/src/outage.ts), before it is promoted again.
      await eventually(async () =>
        expect(server.logs.filter((line) => String(line.msg).startsWith('database read-only'))).toHaveLength(1),
      );
      const ready = await server.call('/readyz');
      expect(ready.status).toBe(503);
      expect(await ready.json()).toMatchObject({
        code: 'not_ready',
        detail: 'The database takes no writes (a standby: a failover is under way).',
      });
      expect((await server.call('/healthz')).status).toBe(200);

      // Promoted: the next request gets a connection that takes writes, with no restart.
      await scratch.set('default_transaction_read_only', null);
      expect((await server.call('/readyz')).status).toBe(200);
      expect((await server.callAs(user, 'POST', '/v1/tenants', { name: 'After' })).status).toBe(201);
      expect(server.bugs).toEqual([]);
      expect(server.logs.filter((line) => line.msg === 'internal error')).toEqual([]);
      expect(server.logs.filter((line) => String(line.msg).startsWith('database read-only'))).toHaveLength(1);
    } finally {
      await server.close();
    }
  });

  it('gives back the Idempotency-Key of a write the outage cut off once the database is back, not a minute later', async () => {
    // The write and then the key's release both meet the read-only server (a trigger raises its error, 25006, for
    // exactly these two statements); the client retries with the same key, as it should after a 503.
    await sendStatement(
      database,
      `CREATE FUNCTION refuse_write() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
         RAISE EXCEPTION 'cannot execute % in a read-only transaction', TG_OP USING ERRCODE = 'read_only_sql_transaction';
       END $$`,
      {},
    );
    await sendStatement(
      database,
      'CREATE TRIGGER refuse BEFORE INSERT ON tenants FOR EACH ROW EXECUTE FUNCTION refuse_write()',
      {},
    );
    await sendStatement(
      database,
      'CREATE TRIGGER refuse BEFORE DELETE ON idempotency_keys FOR EACH ROW EXECUTE FUNCTION refuse_write()',
      {},
    );
    const server = await startTestServer({ database, keepDatabase: true });
    try {
      const user = await server.createUser('retry');
      const create = () =>
        server.callAs(user, 'POST', '/v1/tenants', { name: 'Retried' }, { 'Idempotency-Key': 'failover-1' });
      expect((await create()).status).toBe(503);
      await sendStatement(database, 'DROP TRIGGER refuse ON tenants', {});
      await sendStatement(database, 'DROP TRIGGER refuse ON idempotency_keys', {});
      await eventually(async () => expect((await create()).status).toBe(201), { timeoutMs: 5_000, pauseMs: 200 });
      expect(server.bugs).toEqual([]);
    } finally {
      await server.close();
      await sendStatement(database, 'DROP FUNCTION IF EXISTS refuse_write() CASCADE', {});
    }
  });

  it('never hands out a connection to a read-only server: it is closed at once, and the query fails as an outage', async () => {
    await demote();
    const error = await sendStatement(database, 'SELECT 1', {}).catch((e: unknown) => e);
    expect(isDatabaseOutage(error)).toBe(true);
    expect(isDatabaseReadOnly(error)).toBe(true);
    expect(isDatabaseReadOnly(await database.ping().catch((e: unknown) => e))).toBe(true);
    expect(database.poolStats!().total).toBe(0);
  });

  it('closes a pooled connection whose server turned read-only after it connected, when it comes back', async () => {
    // A reload on a demoted server changes a running session's default_transaction_read_only; the server reports
    // it to the client (ParameterStatus). SET does the same to one session, which the pool then must not reuse.
    const before = await backendPid();
    await sendStatement(database, 'SET default_transaction_read_only = on', {});
    expect(await backendPid()).not.toBe(before);
    const [setting] = await sendStatement<{ value: string }>(
      database,
      "SELECT current_setting('default_transaction_read_only') AS value",
      {},
    );
    expect(setting!.value).toBe('off');
  });

  it('closes the connection of a transaction that met a read-only error instead of giving it to the next request', async () => {
    let pid = 0;
    const error = await database.prisma
      .$transaction(async (tx) => {
        pid = (await tx.$queryRaw<Array<{ pid: number }>>`SELECT pg_backend_pid() AS pid`)[0]!.pid;
        await tx.$executeRaw`SET TRANSACTION READ ONLY`;
        await tx.$executeRaw`UPDATE users SET email = email WHERE false`;
      })
      .catch((e: unknown) => e);
    expect(isDatabaseReadOnly(error)).toBe(true);
    expect(pid).toBeGreaterThan(0);
    expect(await backendPid()).not.toBe(pid);
  });
});
