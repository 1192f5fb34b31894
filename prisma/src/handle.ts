import type { Prisma, PrismaClient } from './generated/client';
import { namedStatement, type StatementParams } from './named-statement';
import type { OutboxSignals } from './outbox-signal';
import { type PlainStatement, traced } from './plain-statement';
import { type SecretBox, SecretKeyError } from './secret-box';
import type { DatabaseTarget } from './target';

/**
 * One database as the code that reads and writes it sees it: the Prisma client, plain statements on the driver
 * Prisma uses, the keys that seal its secrets, and the signals that wake its outbox workers.
 */
export interface Db {
  readonly prisma: PrismaClient;
  /** Plain statements on the driver Prisma itself uses (plain-statement.ts says when a query takes this path). */
  readonly statement: PlainStatement;
  /** The keys that seal this database's secrets; undefined on PostgreSQL without ENCRYPTION_KEYS. */
  readonly secrets: SecretBox | undefined;
  /** Wakes this process's outbox workers when a write queued something for them. */
  readonly outbox: OutboxSignals;
}

/** What `openDatabase` returns: one handle on one database, with everything that belongs to it. */
export interface Database extends Db {
  readonly kind: DatabaseTarget['kind'];
  /** The migrations this start applied. */
  readonly migrated: string[];
  /** The pg pool's connections (PostgreSQL only: PGlite is one connection in this process). */
  readonly poolStats?: () => { total: number; idle: number; waiting: number; max: number };
  /**
   * Resolves when the database answers and takes writes; rejects with DatabaseReadOnlyError when it answers but
   * takes none (a standby: a failover under way), and with the driver's error when it does not answer.
   */
  ping(): Promise<void>;
  /** Closes every connection; PGlite flushes and closes its files. Safe to call twice. */
  close(): Promise<void>;
}

/**
 * Where a plain statement runs: a handle, or inside an interactive transaction its transaction client (the
 * statement must run in the transaction; secrets and outbox signals are used on the handle, after the commit).
 */
export type Queryable = Db | Prisma.TransactionClient;

/**
 * Runs a plain statement: on the driver behind a handle, or through `$queryRawUnsafe` on a transaction client
 * (same result, Prisma's cost, in the transaction).
 */
export function plainQuery<Row>(
  db: Queryable,
  text: string,
  values: readonly unknown[],
  prepared = false,
): Promise<Row[]> {
  return traced(text, () =>
    'statement' in db ? db.statement<Row>(text, values, prepared) : db.$queryRawUnsafe<Row[]>(text, ...values),
  );
}

/** `plainQuery` for a statement with named parameters (`:name`, see named-statement.ts). */
export function namedQuery<Row>(db: Queryable, text: string, params: StatementParams): Promise<Row[]> {
  const statement = namedStatement(text, params);
  return plainQuery<Row>(db, statement.text, statement.values);
}

/**
 * `namedQuery`, prepared on each connection and planned once there (see plain-statement.ts for which statements
 * may be).
 */
export function preparedQuery<Row>(db: Queryable, text: string, params: StatementParams): Promise<Row[]> {
  const statement = namedStatement(text, params);
  return plainQuery<Row>(db, statement.text, statement.values, true);
}

/** The keys of `db`, or the error that says why there are none. */
export function secretBoxOf(db: Db): SecretBox {
  if (!db.secrets)
    throw new SecretKeyError(
      'ENCRYPTION_KEYS is not set: this database cannot seal or open secrets (see docs/configuration.md)',
    );
  return db.secrets;
}
