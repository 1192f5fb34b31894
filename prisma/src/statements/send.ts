import type { Db } from '../handle';
import type { Prisma } from '../generated/client';
import { traced } from './driver';
import { namedStatement, type StatementParams } from './named-parameters';

/**
 * Where a statement runs: a handle, or inside an interactive transaction its transaction client (the statement
 * must run in the transaction; secrets and outbox signals are used on the handle, after the commit).
 */
export type Queryable = Db | Prisma.TransactionClient;

export interface SendOptions {
  /**
   * Prepared on each connection and planned once there: only for statements whose best plan does not depend on
   * the values (lookups and writes by key), see driver.ts.
   */
  prepared?: boolean;
}

/**
 * The one way a statement is sent: its text with named parameters (`:name`, named-parameters.ts), on the driver
 * behind a handle, or through `$queryRawUnsafe` on a transaction client (same result, in the transaction). Statement
 * modules (statements/<resource>.ts) call it; nothing outside the database package does.
 */
export function sendStatement<Row>(
  db: Queryable,
  text: string,
  params: StatementParams,
  options?: SendOptions,
): Promise<Row[]> {
  const statement = namedStatement(text, params);
  return traced(statement.text, () =>
    'statement' in db
      ? db.statement<Row>(statement.text, statement.values, options?.prepared ?? false)
      : db.$queryRawUnsafe<Row[]>(statement.text, ...statement.values),
  );
}
