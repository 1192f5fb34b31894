import type { Db } from '../handle';
import type { Prisma } from '../generated/client';

/** A transaction's client: what statements take (`Queryable`) to run inside it. */
export type Transaction = Prisma.TransactionClient;

/** How long a transaction may wait to start (`maxWait`) and run (`timeout`), in ms; Prisma's defaults are 2 s and 5 s. */
export interface TransactionOptions {
  maxWait?: number;
  timeout?: number;
}

/**
 * Runs `run` in an interactive transaction: committed when it resolves, rolled back when it throws. Where a
 * transaction begins and ends is the server's rule (what must happen together, which checks run under its locks
 * between statements), so the server's domain calls this, and passes the transaction to the statements it sends.
 */
export function inTransaction<T>(
  db: Db,
  run: (tx: Transaction) => Promise<T>,
  options?: TransactionOptions,
): Promise<T> {
  return db.prisma.$transaction(run, options);
}
