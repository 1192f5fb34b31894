/**
 * The one place that decides whether an error means "the database cannot be reached right now" (an outage: the
 * client may retry, answered 503) rather than a bug (500). What an outage looks like differs between the pg
 * driver, Prisma's driver adapters and Prisma versions, so this looks at every root cause it can find: the
 * `.cause` chain, AggregateError's `.errors`, and Prisma's `meta.driverAdapterError`. Proven against a real
 * PostgreSQL that is stopped under load (test/process/database-outage.test.ts): re-run it after any upgrade of
 * Prisma, its adapters or pg.
 */

/** Node socket errors on the way to the database. */
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ECONNABORTED',
]);

/**
 * Prisma: P1001 can't reach the server, P1002 timed out, P1008 operation timed out, P1017 server closed the
 * connection, P2024 timed out waiting for a pooled connection.
 */
const PRISMA_CODES = new Set(['P1001', 'P1002', 'P1008', 'P1017', 'P2024']);

/** Driver adapters' error kinds (@prisma/driver-adapter-utils) that mean the connection, not the query. */
const ADAPTER_KINDS = new Set(['DatabaseNotReachable', 'ConnectionClosed', 'SocketTimeout', 'TooManyConnections']);

/**
 * SQLSTATE 25006 (read_only_sql_transaction): a write reached a server that takes none, a standby or a leader being
 * demoted in a failover (or a database set `default_transaction_read_only`). The server never asks for a read-only
 * transaction itself, so this is always the database's state, not the statement: an outage, answered 503.
 */
export const READ_ONLY_SQLSTATE = '25006';

/** The database takes no writes right now (what `Database.ping` throws when the server it reached is read-only). */
export class DatabaseReadOnlyError extends Error {
  readonly code = READ_ONLY_SQLSTATE;
  readonly severity = 'ERROR';
  constructor(why = 'a standby, or default_transaction_read_only') {
    super(`the database server takes no writes (${why})`);
  }
}

/**
 * PostgreSQL SQLSTATEs: class 08 (connection exception, and 08007, a commit whose synchronous replication is not
 * confirmed: pg-pool.ts), 57P01 admin shutdown, 57P02 crash shutdown, 57P03 cannot connect now (starting or
 * stopping), 53300 too many connections, 25006 read-only (above).
 */
const isOutageSqlState = (code: string): boolean =>
  /^08[0-9A-Z]{3}$/.test(code) ||
  code === '57P01' ||
  code === '57P02' ||
  code === '57P03' ||
  code === '53300' ||
  code === READ_ONLY_SQLSTATE;

/**
 * Prisma's P2028 with this message is an interactive transaction that waited its `maxWait` for a pooled connection
 * and got none: the same as P2024 (every connection busy or the server gone), not a lost transaction.
 */
const NO_CONNECTION_FOR_TRANSACTION = /Unable to start a transaction in the given time/;

/** What node-postgres throws, without a code, when a connection dies or cannot be had in time. */
const PG_CONNECTION_MESSAGES = [
  /^Connection terminated/,
  /^timeout exceeded when trying to connect/,
  /^Client has encountered a connection error and is not queryable/,
];

/** Whether `test` holds for the error or any of its causes (`.cause`, AggregateError's `.errors`, Prisma's meta). */
function anyCause(error: unknown, test: (node: Record<string, unknown>) => boolean): boolean {
  const seen = new Set<unknown>();
  const pending: unknown[] = [error];
  while (pending.length > 0) {
    const node = pending.pop();
    if (typeof node !== 'object' || node === null || seen.has(node)) continue;
    seen.add(node);
    const fields = node as Record<string, unknown>;
    if (test(fields)) return true;
    const { cause, errors, meta } = fields;
    pending.push(cause, (meta as { driverAdapterError?: unknown } | undefined)?.driverAdapterError);
    if (Array.isArray(errors)) pending.push(...(errors as unknown[]));
  }
  return false;
}

export function isDatabaseOutage(error: unknown): boolean {
  return anyCause(error, ({ code, kind, originalCode, message }) => {
    if (typeof code === 'string' && (SOCKET_CODES.has(code) || PRISMA_CODES.has(code) || isOutageSqlState(code)))
      return true;
    if (typeof originalCode === 'string' && isOutageSqlState(originalCode)) return true;
    if (code === 'P2028' && typeof message === 'string' && NO_CONNECTION_FOR_TRANSACTION.test(message)) return true;
    if (typeof kind === 'string' && ADAPTER_KINDS.has(kind)) return true;
    return typeof message === 'string' && PG_CONNECTION_MESSAGES.some((pattern) => pattern.test(message));
  });
}

/** Whether the outage is a database that answers but takes no writes (a standby: a failover under way). */
export function isDatabaseReadOnly(error: unknown): boolean {
  return anyCause(
    error,
    ({ code, originalCode }) => code === READ_ONLY_SQLSTATE || originalCode === READ_ONLY_SQLSTATE,
  );
}

/** What a client is told about an outage, in a 503's `detail`. */
export const outageDetail = (error: unknown): string =>
  isDatabaseReadOnly(error)
    ? `The database takes no writes right now (it is failing over); retry after ${OUTAGE_RETRY_AFTER_SECONDS} seconds.`
    : `The database is unreachable right now; retry after ${OUTAGE_RETRY_AFTER_SECONDS} seconds.`;

/**
 * PostgreSQL cancelled a statement that ran past the pool's `statement_timeout` (SQLSTATE 57014, query_canceled):
 * the database is reachable but too busy for this request right now. Answered like an outage (503, retry), never
 * as a bug, and nothing was changed (the statement, and its transaction, rolled back).
 */
export function isStatementTimeout(error: unknown): boolean {
  return anyCause(error, ({ code, originalCode }) => code === '57014' || originalCode === '57014');
}

/**
 * Errors that an outage can cause but a bug can too, so the error alone cannot tell: Prisma's P2028, a
 * transaction the engine lost (its connection died under it, or it outlived its timeout). They count as an
 * outage when the database is in fact unreachable at that moment (`OutageMonitor.isDown`).
 */
export function mayBeDatabaseOutage(error: unknown): boolean {
  for (let node = error, depth = 0; typeof node === 'object' && node !== null && depth < 10; depth++) {
    if ((node as { code?: unknown }).code === 'P2028') return true;
    node = (node as { cause?: unknown }).cause;
  }
  return false;
}

/** How long clients are told to wait before retrying during an outage. */
export const OUTAGE_RETRY_AFTER_SECONDS = 5;
const PROBE_EVERY_MS = 500;

/** The two levels the monitor writes at (a pino logger has them). */
export interface OutageLogger {
  error(fields: object, message: string): void;
  info(fields: object, message: string): void;
}

/**
 * Logs an outage once, when the first request hits it, and its end once, with how long it lasted and how many
 * requests were refused meanwhile: never a line per request. While the database is away it pings it every
 * PROBE_EVERY_MS to notice the end. It only watches: requests go to the database as usual, so the service
 * recovers on the first request after the database is back, whatever this says.
 *
 * An outage error alone does not open an outage: the database must also fail a ping. After an outage, requests
 * still meet connections it broke (a pooled connection whose server went away, a request sent before the end was
 * noticed): their errors look like the outage's, but the database answers. They are answered 503 like any outage
 * error, and counted, not logged as a new outage.
 */
export class OutageMonitor {
  private since: number | undefined;
  private affected = 0;
  private probe: NodeJS.Timeout | undefined;
  /** A ping under way to confirm an outage (at most one: the errors that meet it wait for its answer). */
  private confirming: Promise<void> | undefined;
  /** Outage errors met while the database answered pings: connections an earlier outage broke. */
  private stale = 0;
  private stopped = false;

  constructor(
    private readonly ping: () => Promise<void>,
    private readonly logger: OutageLogger,
  ) {}

  get down(): boolean {
    return this.since !== undefined;
  }

  /**
   * Whether an outage explains `error`: one that only an outage raises, or one that an outage or a bug may raise
   * (`mayBeDatabaseOutage`) while the database is in fact unreachable. Otherwise it is a bug.
   */
  async explains(error: unknown): Promise<boolean> {
    return isDatabaseOutage(error) || (mayBeDatabaseOutage(error) && (await this.isDown()));
  }

  /**
   * Called for every request that met an outage (with an error `explains` accepted). The first one while no outage is
   * under way pings the database: if it does not answer, the outage starts (at that first error) and is logged;
   * if it answers, the error came from a connection an earlier outage broke, and no outage is logged.
   */
  report(error: unknown): void {
    this.affected++;
    if (this.since !== undefined || this.confirming) return;
    const at = Date.now();
    this.confirming = this.isDown().then((down) => {
      this.confirming = undefined;
      if (this.since !== undefined || this.stopped) return;
      if (!down) {
        this.stale += this.affected;
        this.affected = 0;
        return;
      }
      this.since = at;
      this.logger.error(
        { err: error },
        `${isDatabaseReadOnly(error) ? 'database read-only (a standby: failing over?)' : 'database unreachable'}: ` +
          `answering 503 with Retry-After: ${OUTAGE_RETRY_AFTER_SECONDS} until it is back`,
      );
      this.probe = setInterval(() => {
        this.ping().then(
          () => this.recovered(),
          () => undefined,
        );
      }, PROBE_EVERY_MS);
      this.probe.unref();
    });
  }

  /** Outage errors met while the database answered (connections an earlier outage broke), since the start. */
  get staleConnectionErrors(): number {
    return this.stale;
  }

  /** Settles once the ping that confirms or dismisses a reported outage has answered (for tests). */
  async settled(): Promise<void> {
    await this.confirming;
  }

  /**
   * Whether the database is unavailable now: an outage is under way, or it does not answer a ping (which also asks
   * whether it takes writes) within 1 s.
   */
  async isDown(): Promise<boolean> {
    if (this.down) return true;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('no answer within 1 s')), 1_000);
    });
    try {
      await Promise.race([this.ping(), timeout]);
      return false;
    } catch {
      return true;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Stops probing (the app is closing). */
  stop(): void {
    this.stopped = true;
    this.stopProbe();
  }

  private stopProbe(): void {
    clearInterval(this.probe);
    this.probe = undefined;
  }

  private recovered(): void {
    if (this.since === undefined) return;
    this.logger.info({ downMs: Date.now() - this.since, requestsAffected: this.affected }, 'database reachable again');
    this.stopProbe();
    this.since = undefined;
    this.affected = 0;
  }
}
