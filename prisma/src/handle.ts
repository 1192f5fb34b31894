import type { PrismaClient } from './generated/client';
import type { OutboxSignals } from './outbox-signal';
import type { DriverStatement } from './statements/driver';
import { type SecretBox, SecretKeyError } from './secret-box';
import type { DatabaseTarget } from './target';

/**
 * One database as the code that reads and writes it sees it: the Prisma client, statements on the driver Prisma
 * uses, the keys that seal its secrets, and the signals that wake its outbox workers.
 */
export interface Db {
  readonly prisma: PrismaClient;
  /** Statements on the driver Prisma itself uses: send them with `sendStatement` (statements/send.ts). */
  readonly statement: DriverStatement;
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

/** The keys of `db`, or the error that says why there are none. */
export function secretBoxOf(db: Db): SecretBox {
  if (!db.secrets)
    throw new SecretKeyError(
      'ENCRYPTION_KEYS is not set: this database cannot seal or open secrets (see docs/configuration.md)',
    );
  return db.secrets;
}
