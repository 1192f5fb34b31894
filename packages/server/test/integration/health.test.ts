import { openDatabase, parseEncryptionKeys, sendStatement } from '@works-api/prisma';
import { eventually } from '../support/load';
import { scratchDatabase } from '../support/scratch-database';
import { startTestServer, TEST_ENCRYPTION_KEYS, testDatabaseTarget } from '../support/server';

const testEncryptionKeys = () => parseEncryptionKeys(TEST_ENCRYPTION_KEYS);

/** Liveness and readiness probes: unversioned, unauthenticated, and readiness follows the database. */

describe('GET /healthz and GET /readyz', () => {
  it('answers 200 without a key, outside /v1', async () => {
    const server = await startTestServer();
    try {
      const health = await server.call('/healthz');
      expect(health.status).toBe(200);
      expect(await health.json()).toEqual({ status: 'ok' });
      const ready = await server.call('/readyz');
      expect(ready.status).toBe(200);
      expect(await ready.json()).toEqual({ status: 'ready' });
    } finally {
      await server.close();
    }
  });

  it('fails readiness with 503 problem+json while shutting down, but stays alive', async () => {
    const server = await startTestServer();
    try {
      server.lifecycle.startDraining();
      const ready = await server.call('/readyz');
      expect(ready.status).toBe(503);
      expect(ready.headers.get('connection')).toBe('close');
      expect(await ready.json()).toMatchObject({ status: 503, code: 'not_ready' });
      expect((await server.call('/healthz')).status).toBe(200);
    } finally {
      await server.close();
    }
  });

  it('fails readiness with 503 when the database is gone, and recovers when it is back (PostgreSQL)', async () => {
    const url = process.env.DATABASE_URL;
    if (!url) return expectReadinessFailsWhenPgliteIsClosed();
    const scratch = await scratchDatabase(url, 'works_readyz');
    const database = await openDatabase({ kind: 'postgres', url: scratch.url, encryptionKeys: testEncryptionKeys() });
    const server = await startTestServer({ database });
    try {
      expect((await server.call('/readyz')).status).toBe(200);
      await scratch.disconnectEveryone({ allowNew: false });
      const down = await server.call('/readyz');
      expect(down.status).toBe(503);
      expect(await down.json()).toMatchObject({ code: 'not_ready', detail: 'The database is unreachable.' });
      expect((await server.call('/healthz')).status).toBe(200);
      await scratch.allowConnections();
      expect((await server.call('/readyz')).status).toBe(200);
    } finally {
      await server.close().catch(() => undefined);
      await scratch.drop();
    }
  });

  it('survives idle connections dropped by the server while Prisma is disconnected (PostgreSQL)', async () => {
    const url = process.env.DATABASE_URL;
    if (!url) return;
    const scratch = await scratchDatabase(url, 'works_readyz');
    const database = await openDatabase({ kind: 'postgres', url: scratch.url, encryptionKeys: testEncryptionKeys() });
    try {
      // Prisma's adapter stops listening for pool errors when Prisma disconnects; the plain statements still use
      // the pool. Idle connections dropped then must not be an unhandled 'error' (which would end the process).
      await database.prisma.$disconnect();
      const select = () => sendStatement<{ one: number }>(database, 'SELECT 1 AS one', {});
      await Promise.all([select(), select(), select()]);
      await scratch.disconnectEveryone({ allowNew: true });
      // The pool drops each connection as it hears of its end (the 'error' that must not go unhandled).
      await eventually(() => expect(database.poolStats!().total).toBe(0));
      expect(await select()).toEqual([{ one: 1 }]);
    } finally {
      await database.close();
      await scratch.drop();
    }
  });
});

/** On the embedded database, "gone" is a closed PGlite. */
async function expectReadinessFailsWhenPgliteIsClosed() {
  const database = await openDatabase(testDatabaseTarget());
  const server = await startTestServer({ database, keepDatabase: true });
  try {
    expect((await server.call('/readyz')).status).toBe(200);
    await database.close();
    const down = await server.call('/readyz');
    expect(down.status).toBe(503);
    expect(await down.json()).toMatchObject({ code: 'not_ready', detail: 'The database is unreachable.' });
    expect((await server.call('/healthz')).status).toBe(200);
  } finally {
    await server.close();
  }
}
