import {
  DatabaseReadOnlyError,
  isDatabaseOutage,
  isDatabaseReadOnly,
  isStatementTimeout,
  mayBeDatabaseOutage,
  OutageMonitor,
  outageDetail,
} from './outage';
import { connect, createServer, type Server } from 'node:net';

/**
 * The shapes an outage has been seen to take (pg, @prisma/adapter-pg, Prisma's client), and errors that are not
 * an outage. The real proof is test/process/database-outage.test.ts, against a PostgreSQL that is stopped.
 */
const socketError = (code: string) =>
  Object.assign(new Error(`connect ${code} 127.0.0.1:5432`), { code, errno: -111, syscall: 'connect' });
const pgError = (code: string, message: string) => Object.assign(new Error(message), { code, severity: 'FATAL' });
const prismaError = (code: string, cause: Record<string, unknown>) =>
  Object.assign(new Error('Invalid invocation'), {
    code,
    meta: { driverAdapterError: Object.assign(new Error('DriverAdapterError'), { cause }) },
  });

describe('isDatabaseOutage', () => {
  it.each([
    ['a refused connection (pg)', socketError('ECONNREFUSED')],
    ['a reset connection', socketError('ECONNRESET')],
    ['a timed-out connection', socketError('ETIMEDOUT')],
    ['a broken pipe', socketError('EPIPE')],
    [
      'refused on every address (AggregateError)',
      new AggregateError([socketError('ECONNREFUSED'), socketError('ECONNREFUSED')]),
    ],
    ['pg: Connection terminated unexpectedly', new Error('Connection terminated unexpectedly')],
    [
      'pg: Connection terminated due to connection timeout',
      new Error('Connection terminated due to connection timeout'),
    ],
    ['pg: no free connection in time', new Error('timeout exceeded when trying to connect')],
    ['SQLSTATE 57P01 admin shutdown', pgError('57P01', 'terminating connection due to administrator command')],
    ['SQLSTATE 57P03 cannot connect now', pgError('57P03', 'the database system is starting up')],
    ['SQLSTATE 08006 connection failure', pgError('08006', 'connection failure')],
    ['SQLSTATE 53300 too many connections', pgError('53300', 'sorry, too many clients already')],
    [
      'Prisma P1001 (adapter kind DatabaseNotReachable)',
      prismaError('P1001', { kind: 'DatabaseNotReachable', host: '127.0.0.1', port: 5432 }),
    ],
    ['Prisma P1017', Object.assign(new Error('Server has closed the connection.'), { code: 'P1017' })],
    ['Prisma P2024', Object.assign(new Error('Timed out fetching a new connection'), { code: 'P2024' })],
    [
      'a raw query cut by shutdown (P2010, postgres 57P01)',
      prismaError('P2010', { kind: 'postgres', code: '57P01', originalCode: '57P01' }),
    ],
    [
      'a write on a standby (SQLSTATE 25006), as pg throws it',
      pgError('25006', 'cannot execute INSERT in a read-only transaction'),
    ],
    [
      'a write on a standby through Prisma (P2039, as seen in a failover)',
      prismaError('P2039', { kind: 'postgres', code: '25006', originalCode: '25006' }),
    ],
    ['a commit the synchronous standby did not confirm (08007)', pgError('08007', 'the commit was not confirmed')],
    [
      'an adapter ConnectionClosed in a cause chain',
      new Error('outer', { cause: new Error('adapter', { cause: { kind: 'ConnectionClosed' } }) }),
    ],
  ])('says yes to %s', (_what, error) => {
    expect(isDatabaseOutage(error)).toBe(true);
  });

  it.each([
    ['a unique violation', prismaError('P2002', { kind: 'UniqueConstraintViolation' })],
    ['a raw query with a syntax error', prismaError('P2010', { kind: 'postgres', code: '42601' })],
    ['invalid uuid input', pgError('22P02', 'invalid input syntax for type uuid: "abc"')],
    ['a wrong password', prismaError('P1000', { kind: 'AuthenticationFailed' })],
    ['a TypeError', new TypeError("Cannot read properties of undefined (reading 'id')")],
    ['a string', 'ECONNREFUSED'],
    ['null', null],
  ])('says no to %s', (_what, error) => {
    expect(isDatabaseOutage(error)).toBe(false);
  });

  it('stops on cycles', () => {
    const a: Record<string, unknown> = { message: 'a' };
    a.cause = { message: 'b', cause: a };
    expect(isDatabaseOutage(a)).toBe(false);
  });
});

describe('a transaction that waited for a connection and got none', () => {
  it('is an outage like P2024, whatever the database says to a ping', () => {
    const noConnection = Object.assign(
      new Error('Transaction API error: Unable to start a transaction in the given time.'),
      { code: 'P2028' },
    );
    expect(isDatabaseOutage(noConnection)).toBe(true);
    expect(isDatabaseOutage(new Error('wrapped', { cause: noConnection }))).toBe(true);
  });
});

describe('mayBeDatabaseOutage', () => {
  it('says yes to a transaction Prisma lost (P2028), which only a ping can tell from a bug', () => {
    const lost = Object.assign(new Error('Transaction API error: Transaction already closed'), { code: 'P2028' });
    expect([isDatabaseOutage(lost), mayBeDatabaseOutage(lost)]).toEqual([false, true]);
    expect(mayBeDatabaseOutage(new Error('wrapped', { cause: lost }))).toBe(true);
    expect(mayBeDatabaseOutage(Object.assign(new Error('unique'), { code: 'P2002' }))).toBe(false);
  });
});

describe('isStatementTimeout', () => {
  const canceled = 'canceling statement due to statement timeout';
  it('recognises SQLSTATE 57014 from pg and through Prisma, and nothing else', () => {
    expect(isStatementTimeout(pgError('57014', canceled))).toBe(true);
    expect(isStatementTimeout(prismaError('P2010', { kind: 'postgres', code: '57014', originalCode: '57014' }))).toBe(
      true,
    );
    expect(isStatementTimeout(new Error('wrapped', { cause: pgError('57014', canceled) }))).toBe(true);
    expect(isStatementTimeout(pgError('23505', 'duplicate key'))).toBe(false);
    expect(isDatabaseOutage(pgError('57014', canceled))).toBe(false);
  });
});

describe('a database that takes no writes (a standby, mid-failover)', () => {
  it('is told apart from one that does not answer, for the 503 and the readiness probe', () => {
    const readOnly = prismaError('P2039', { kind: 'postgres', code: '25006', originalCode: '25006' });
    expect(isDatabaseReadOnly(readOnly)).toBe(true);
    expect(isDatabaseReadOnly(new DatabaseReadOnlyError())).toBe(true);
    expect(isDatabaseOutage(new DatabaseReadOnlyError())).toBe(true);
    expect(isDatabaseReadOnly(socketError('ECONNREFUSED'))).toBe(false);
    expect(outageDetail(readOnly)).toBe(
      'The database takes no writes right now (it is failing over); retry after 5 seconds.',
    );
    expect(outageDetail(socketError('ECONNREFUSED'))).toBe(
      'The database is unreachable right now; retry after 5 seconds.',
    );
  });
});

describe('OutageMonitor', () => {
  /**
   * The database's reachability at the socket: a ping connects to a port that a server listens on (it answers) or
   * that nothing listens on (ECONNREFUSED, what a stopped PostgreSQL gives).
   */
  const listen = () =>
    new Promise<Server>((resolve) => {
      const server = createServer((socket) => socket.end());
      server.listen(0, '127.0.0.1', () => resolve(server));
    });
  const portOf = (server: Server) => (server.address() as { port: number }).port;
  const pingPort = (port: number) =>
    new Promise<void>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.destroy();
        resolve();
      });
      socket.on('error', reject);
    });

  it('logs an outage once, its end once, and no new outage for a connection it broke that fails afterwards', async () => {
    const up = await listen();
    const gone = await listen();
    const refusedPort = portOf(gone);
    await new Promise((resolve) => gone.close(resolve));
    let port = refusedPort;
    const errors: string[] = [];
    let reachable: (fields: object) => void = () => undefined;
    const back = new Promise<object>((resolve) => (reachable = resolve));
    const monitor = new OutageMonitor(() => pingPort(port), {
      error: (_fields, message) => errors.push(message),
      info: (fields, message) => message === 'database reachable again' && reachable(fields),
    });
    try {
      // Away: two requests meet it, one outage is logged.
      monitor.report(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }));
      monitor.report(new Error('Connection terminated unexpectedly'));
      await monitor.settled();
      expect([monitor.down, errors]).toEqual([true, [expect.stringMatching(/^database unreachable/)]]);

      // Back: the probe notices.
      port = portOf(up);
      expect(await back).toMatchObject({ requestsAffected: 2 });
      expect(monitor.down).toBe(false);

      // A pooled connection the outage broke fails now, while the database answers: no second outage.
      monitor.report(new Error('Connection terminated unexpectedly'));
      await monitor.settled();
      expect([monitor.down, errors.length, monitor.staleConnectionErrors]).toEqual([false, 1, 1]);

      // The next real outage is logged again.
      port = refusedPort;
      monitor.report(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }));
      await monitor.settled();
      expect([monitor.down, errors.length]).toEqual([true, 2]);
    } finally {
      monitor.stop();
      await new Promise((resolve) => up.close(resolve));
    }
  });
});
