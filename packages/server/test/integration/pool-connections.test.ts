import { type Database, openDatabase, parseEncryptionKeys } from '@works-api/prisma';
import { TEST_ENCRYPTION_KEYS } from '../support/server';

/**
 * A statement the server refuses leaves its connection in the pool (prisma/src/pg-pool.ts, releaseByHealth): pg-pool
 * closes every connection released with an error, and a unique violation (a slug already taken, which the server then
 * numbers) cost a new connection and its backend each time. A connection that is really gone, or a transaction left
 * aborted, is still closed. PGlite has no pool, so this runs on PostgreSQL only.
 */
const url = process.env.DATABASE_URL;
const onPostgres = url ? describe : describe.skip;
if (!url) console.log('pool-connections: PostgreSQL only (PGlite has no connection pool); set DATABASE_URL');

onPostgres('connections after a failed statement (PostgreSQL)', () => {
  let database: Database;
  // Sequential statements take the connection released last (pg-pool's idle list is last in, first out).
  const backend = async () => (await database.statement<{ pid: number }>('SELECT pg_backend_pid() AS pid', []))[0]!.pid;
  const failing = (text: string) =>
    database.statement(text, []).then(
      () => {
        throw new Error(`${text} succeeded`);
      },
      (error: unknown) => error as { code?: string },
    );

  beforeAll(async () => {
    database = await openDatabase({
      kind: 'postgres',
      url: url!,
      encryptionKeys: parseEncryptionKeys(TEST_ENCRYPTION_KEYS),
    });
  });
  afterAll(() => database?.close());

  it('keeps the connection after a unique violation, an error in a prepared statement, and a division by zero', async () => {
    const pid = await backend();
    expect((await failing('SELECT 1 / 0')).code).toBe('22012');
    expect(await backend()).toBe(pid);

    await database.statement('CREATE TEMP TABLE IF NOT EXISTS pool_unique (id int PRIMARY KEY)', []);
    await database.statement('INSERT INTO pool_unique VALUES (1) ON CONFLICT DO NOTHING', []);
    expect((await failing('INSERT INTO pool_unique VALUES (1)')).code).toBe('23505');
    expect(await backend()).toBe(pid);

    const prepared = await database.statement('SELECT 1 / $1::int AS n', [0], true).then(
      () => undefined,
      (error: { code?: string }) => error.code,
    );
    expect(prepared).toBe('22012');
    expect(await backend()).toBe(pid);
  });

  it('closes a connection whose backend is gone, and the next statement gets another', async () => {
    const pid = await backend();
    // The server ends this session itself (FATAL 57P01, then the socket closes).
    await failing('SELECT pg_terminate_backend(pg_backend_pid())');
    expect(await backend()).not.toBe(pid);
  });
});
