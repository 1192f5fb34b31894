import { connect } from 'node:net';
import pg, { type ClientBase, Pool, type PoolClient, type PoolConfig } from 'pg';
import { DatabaseReadOnlyError, READ_ONLY_SQLSTATE } from './outage';

/** How long a request waits for a free connection before it fails (and is answered 503, see outage.ts). */
const CONNECT_TIMEOUT_MS = 5_000;

/**
 * SQLSTATE 08007 (transaction_resolution_unknown), for a commit that PostgreSQL confirmed with a warning instead of
 * an error: its wait for the synchronous standby was cancelled, so the transaction is committed on the leader alone
 * and a failover may lose it. It is reported as an error (503), never as a success.
 */
export const UNCONFIRMED_COMMIT_SQLSTATE = '08007';

/** PostgreSQL's warning for a commit whose wait for the synchronous standby was cancelled (syncrep.c). */
const SYNC_WAIT_CANCELLED = /^canceling wait for synchronous replication/;

export class UnconfirmedCommitError extends Error {
  readonly code = UNCONFIRMED_COMMIT_SQLSTATE;
  readonly severity = 'ERROR';
  constructor(readonly detail: string | undefined) {
    super('the commit was not confirmed by a synchronous standby (its wait was cancelled): it may be lost');
  }
}

/**
 * A query still running this long after the statement timeout is one PostgreSQL does not time out: a commit waiting
 * for a synchronous standby (the timeout does not cover commits), or a server that went silent. It is cancelled
 * (a CancelRequest, as psql's Ctrl-C) and, if no answer comes CUT_AFTER_MS later either, its connection is cut.
 */
const CANCEL_AFTER_TIMEOUT_MS = 1_000;
const CUT_AFTER_MS = 2_000;

/**
 * The striped counters (work and tenant counts, a tenant's emails of the day) add to the row of the session's slot,
 * `counter_slot()` in SQL: by default the backend's pid modulo 16, so two connections of one pool often shared a
 * slot, and their writes into one parent queued on each other's counter row. Each connection this process opens
 * names the next slot instead, in its start-up packet (no round trip), from a random start (another process has its
 * own): the pool's 10 connections write 10 different rows.
 *
 * JIT compilation and parallel workers are off for the same connections: every statement reads a page's rows, and
 * both cost more to start than such a statement costs to run. PostgreSQL compiles any statement whose estimate passes
 * `jit_above_cost`, which a search's fallback plan does for a common word even when it never runs (capped-lists.ts,
 * `readSearchPage`: 87 ms of compiling for a 1 ms statement), and a generic plan that expects many rows starts
 * workers (32 ms before the first of 300 rows).
 */
let nextCounterSlot = Math.floor(Math.random() * 16);
function withSessionOptions(config: pg.ClientConfig | undefined): pg.ClientConfig {
  const slot = nextCounterSlot++ % 16;
  const options = [
    config?.options,
    `-c works.counter_slot=${slot}`,
    '-c jit=off',
    '-c max_parallel_workers_per_gather=0',
  ]
    .filter(Boolean)
    .join(' ');
  return { ...config, options };
}

/**
 * A connection that follows what the server tells it about itself. PostgreSQL 14+ reports `in_hot_standby` and
 * `default_transaction_read_only` when the session starts and again whenever they change (a promotion, a reload),
 * which is how libpq's `target_session_attrs=read-write` works without a query; node-postgres has no such option.
 * It turns a commit acknowledged by the leader alone (the warning above) into an error, bounds every query to the
 * statement timeout and a little more, and marks itself unusable when the pool should close it rather than keep it.
 */
class WatchedClient extends pg.Client {
  private readonly reported = new Map<string, string>();
  private syncWaitCancelled: string | undefined | null = null;
  /** Past the statement timeout plus CANCEL_AFTER_TIMEOUT_MS, a query is cancelled (undefined: no timeout). */
  private readonly deadlineMs: number | undefined;
  /** Set once the connection is no use to us: the pool closes it instead of keeping it. */
  unusable = false;

  // The pool passes its options (a config object) to every connection it makes.
  constructor(config?: pg.ClientConfig) {
    super(withSessionOptions(config));
    const statementTimeout = Number(config?.statement_timeout ?? 0);
    if (statementTimeout > 0) this.deadlineMs = statementTimeout + CANCEL_AFTER_TIMEOUT_MS;
    this.wire.on('parameterStatus', (message: { parameterName: string; parameterValue: string }) => {
      this.reported.set(message.parameterName, message.parameterValue);
      if (this.readOnly) this.unusable = true;
    });
    this.on('notice', (notice: { severity?: string; message?: string; detail?: string }) => {
      if (notice.severity === 'WARNING' && SYNC_WAIT_CANCELLED.test(notice.message ?? '')) {
        this.syncWaitCancelled = notice.detail;
      }
    });
    // pg's own parameters (config, values, callback; or config, callback), never a rest array. With `(...args)`
    // and the wrapped callback written into the array, each query's callback (and through it the request that
    // awaited it) outlived the young generation's collections: get tenant promoted 14 KB a request to the old
    // generation, and at 600 requests a second its full collections (10-25 ms stalls) came every 2 s. The same
    // wrapper with named parameters: 7.7 KB a request (docs/benchmarks.md, "Full collections under load").
    const query = this.query.bind(this) as (config: unknown, values?: unknown, callback?: unknown) => unknown;
    this.query = ((config: unknown, values?: unknown, callback?: unknown) => {
      const settle = this.guard();
      const done = typeof callback === 'function' ? callback : typeof values === 'function' ? values : undefined;
      if (done) {
        const reported = (error: Error | null, result: unknown) => {
          settle();
          const failure = error ? this.failed(error) : this.succeeded();
          (done as (error: Error | null, result?: unknown) => void)(failure, failure ? undefined : result);
        };
        return done === callback ? query(config, values, reported) : query(config, reported);
      }
      const result = query(config, values);
      if (!(result instanceof Promise)) {
        settle(); // a Submittable (COPY, for dumps): it reports on its own, and is not bounded
        return result;
      }
      return result.then(
        (value: unknown) => {
          settle();
          const failure = this.succeeded();
          if (failure) throw failure;
          return value;
        },
        (error: Error) => {
          settle();
          throw this.failed(error);
        },
      );
    }) as typeof this.query;
  }

  /** Whether the server says it takes no writes; undefined when it does not say (before PostgreSQL 14). */
  get readOnly(): boolean | undefined {
    const standby = this.reported.get('in_hot_standby');
    const readOnly = this.reported.get('default_transaction_read_only');
    if (standby === undefined && readOnly === undefined) return undefined;
    return standby === 'on' || readOnly === 'on';
  }

  /** The protocol connection (pg's, not in its types). */
  private get wire(): NodeJS.EventEmitter & { stream: { destroy(error?: Error): void } } {
    return (this as unknown as { connection: NodeJS.EventEmitter & { stream: { destroy(): void } } }).connection;
  }

  /** Starts the deadline of one query; returns what stops it. */
  private guard(): () => void {
    if (this.deadlineMs === undefined) return () => undefined;
    let cut: NodeJS.Timeout | undefined;
    const cancel = setTimeout(() => {
      this.unusable = true;
      sendCancelRequest(this as unknown as BackendKey);
      cut = setTimeout(() => this.wire.stream.destroy(), CUT_AFTER_MS);
    }, this.deadlineMs);
    return () => {
      clearTimeout(cancel);
      clearTimeout(cut);
    };
  }

  /** A query failed: a read-only error makes the connection unusable. */
  private failed(error: Error): Error {
    this.syncWaitCancelled = null;
    if ((error as { code?: string }).code === READ_ONLY_SQLSTATE) this.unusable = true;
    return error;
  }

  /** A query succeeded: unless its commit was confirmed by the leader alone, which is an error (and unusable). */
  private succeeded(): Error | null {
    const cancelled = this.syncWaitCancelled;
    this.syncWaitCancelled = null;
    if (cancelled === null) return null;
    this.unusable = true;
    return new UnconfirmedCommitError(cancelled);
  }
}

interface BackendKey {
  host: string;
  port: number;
  processID: number | null;
  secretKey: number | null;
}

/**
 * Asks the server to cancel what a session is doing: PostgreSQL's CancelRequest, on a connection of its own (the
 * session's is busy). Best effort: a server that is gone cannot answer, and the connection is then cut.
 */
function sendCancelRequest({ host, port, processID, secretKey }: BackendKey): void {
  if (processID === null || secretKey === null) return;
  const request = Buffer.alloc(16);
  request.writeInt32BE(16, 0);
  request.writeInt32BE(80877102, 4); // the cancel request code
  request.writeInt32BE(processID, 8);
  request.writeInt32BE(secretKey, 12);
  const socket = host.startsWith('/') ? connect(`${host}/.s.PGSQL.${port}`) : connect(port, host);
  socket.setTimeout(CUT_AFTER_MS, () => socket.destroy());
  socket.once('connect', () => socket.end(request));
  socket.on('error', () => socket.destroy());
}

/**
 * The pg pool Prisma's adapter and our plain statements share, made to ride out an outage and a failover:
 *
 * - A request waits at most CONNECT_TIMEOUT_MS for a connection (pg's default is forever), so requests fail
 *   fast while the server is away instead of piling up.
 * - Idle connections that the server drops are an 'error' on the pool, fatal to the process when nobody listens.
 *   Prisma's adapter listens only while Prisma is connected; pg has already discarded the dead connection and the
 *   next query opens another, so there is nothing more to do (/readyz reports the outage).
 * - Only a server that takes writes is kept: a new connection that reaches a standby (an address that still points
 *   at a demoted leader, a proxy that has not yet noticed) is closed at once and the request answered 503; a
 *   connection whose server turns read-only, or that meets a read-only error (SQLSTATE 25006), is closed when it
 *   comes back to the pool instead of failing every request that gets it next. So is one whose commit the
 *   synchronous standby did not confirm.
 *
 * Connections cut inside an interactive transaction must come back to the pool, or an outage fills it for good:
 * @prisma/adapter-pg 6.19 did not give them back; 7.10 does. test/process/database-outage.test.ts checks it.
 */
export function createPgPool(config: PoolConfig): Pool {
  const pool = new Pool({
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    ...config,
    Client: WatchedClient,
    // pg-pool awaits the hook before it hands the connection out (a rejection closes it); its types say void.
    // eslint-disable-next-line @typescript-eslint/no-misused-promises
    onConnect: refuseReadOnly,
  });
  pool.on('error', () => undefined);
  type Done = (release?: Error | boolean) => void;
  const connect = pool.connect.bind(pool) as (
    callback?: (error: Error | undefined, client: PoolClient | undefined, done: Done) => void,
  ) => Promise<PoolClient> | void;
  pool.connect = ((callback?: Parameters<typeof connect>[0]) => {
    if (callback)
      return connect((error, client, done) =>
        callback(error, client && releaseByHealth(client), client ? client.release.bind(client) : done),
      );
    return (connect() as Promise<PoolClient>).then(releaseByHealth);
  }) as typeof pool.connect;
  return pool;
}

/** A new connection must reach a server that takes writes (asked with a query before PostgreSQL 14). */
async function refuseReadOnly(client: ClientBase): Promise<void> {
  let readOnly = (client as unknown as WatchedClient).readOnly;
  if (readOnly === undefined) {
    const { rows } = await client.query<{ readOnly: boolean }>(
      `SELECT pg_is_in_recovery() OR current_setting('transaction_read_only') = 'on' AS "readOnly"`,
    );
    readOnly = rows[0]!.readOnly;
  }
  if (readOnly) throw new DatabaseReadOnlyError();
}

/**
 * Wraps this checkout's `release` so that the connection's health decides whether it goes back to the pool: one
 * found unusable is closed, and a sound one is kept even when its statement failed. pg-pool's `query` releases the
 * connection with the statement's error, and pg-pool closes every connection released with an error: each unique
 * violation (a slug already taken, which createWithUniqueSlug then numbers; a key's race) cost a new connection, its
 * backend and its prepared statements.
 */
function releaseByHealth(client: PoolClient): PoolClient {
  const release = client.release.bind(client);
  client.release = (error?: Error | boolean) =>
    release(
      (client as unknown as WatchedClient).unusable
        ? new Error('connection unusable')
        : error instanceof Error && statementFailedOnSoundConnection(error, client)
          ? undefined
          : error,
    );
  return client;
}

/**
 * The server refused a statement (an ERROR, not FATAL) outside any transaction: the session is as it was, ready for
 * the next. A broken socket, a FATAL error or a transaction left open or aborted still closes the connection.
 */
function statementFailedOnSoundConnection(error: Error, client: PoolClient): boolean {
  return error instanceof pg.DatabaseError && error.severity === 'ERROR' && client.getTransactionStatus() === 'I';
}
