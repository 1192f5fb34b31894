import type { Prisma, PrismaClient } from './generated/client';
import { namedStatement, type StatementParams } from './named-statement';
import type { OutboxSignals } from './outbox-signal';
import { type PlainStatement, traced } from './plain-statement';
import { type SecretBox, SecretKeyError } from './secret-box';
import type { DatabaseTarget } from './target';

export type Db = PrismaClient;

/** What `openDatabase` returns: one handle on one database, with everything that belongs to it. */
export interface Database {
  readonly prisma: Db;
  readonly kind: DatabaseTarget['kind'];
  /** Plain statements on the driver Prisma itself uses (plain-statement.ts says when a query takes this path). */
  readonly statement: PlainStatement;
  /** The keys that seal this database's secrets; undefined on PostgreSQL without ENCRYPTION_KEYS. */
  readonly secrets: SecretBox | undefined;
  /** Wakes this process's outbox workers when a write queued something for them. */
  readonly outbox: OutboxSignals;
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
 * The domain's functions take a Prisma client (or a transaction's) and reach the rest of its database through it:
 * one lookup from the client `openDatabase` made to its handle.
 */
const handles = new WeakMap<PrismaClient, Database>();

/** Called by `openDatabase` for the handle it returns. */
export function registerDatabase(database: Database): void {
  handles.set(database.prisma, database);
}

/** A client `openDatabase` made, or a transaction's (which runs its statements through Prisma, in the transaction). */
export type Queryable = PrismaClient | Prisma.TransactionClient;

/**
 * Runs a plain statement on the driver behind `db`. Falls back to `$queryRawUnsafe` (same result, Prisma's
 * cost) for a client `openDatabase` did not create, such as a transaction's.
 */
export function plainQuery<Row>(
  db: Queryable,
  text: string,
  values: readonly unknown[],
  prepared = false,
): Promise<Row[]> {
  const run = handles.get(db as PrismaClient)?.statement;
  return traced(text, () => (run ? run<Row>(text, values, prepared) : db.$queryRawUnsafe<Row[]>(text, ...values)));
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

/** The keys of the database behind `db` (the client `openDatabase` made, not a transaction's). */
export function secretBoxOf(db: PrismaClient): SecretBox {
  const box = handles.get(db)?.secrets;
  if (!box)
    throw new SecretKeyError(
      'ENCRYPTION_KEYS is not set: this database cannot seal or open secrets (see docs/configuration.md)',
    );
  return box;
}

/** A write through `db` committed a webhook outbox row: wakes this process's dispatcher. */
export const signalOutboxWrite = (db: PrismaClient): void => handles.get(db)?.outbox.webhooks.signal();

/** A write through `db` queued an email: wakes this process's mail sender. */
export const signalMailQueued = (db: PrismaClient): void => handles.get(db)?.outbox.mail.signal();

/** Calls `listener` whenever a write through `db` signals its webhook outbox; returns how to stop. */
export const onOutboxWrite = (db: PrismaClient, listener: () => void): (() => void) =>
  handles.get(db)?.outbox.webhooks.on(listener) ?? (() => {});

/** Calls `listener` whenever a write through `db` queues an email; returns how to stop. */
export const onMailQueued = (db: PrismaClient, listener: () => void): (() => void) =>
  handles.get(db)?.outbox.mail.on(listener) ?? (() => {});
