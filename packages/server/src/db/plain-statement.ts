import type { PrismaClient } from './generated/client';

/**
 * A parameterised statement sent straight to the driver Prisma itself uses (the same pg pool, or the same PGlite).
 *
 * For the two lookups every request makes (the API key, the caller's membership). Prisma 7's plan cache skips the
 * compile, but a Prisma call still interprets its plan and maps the rows: done through `findUnique` instead, the two
 * lookups cost 0.1-0.4 ms more CPU per request (`pnpm bench --against`, same run, 3 rounds: lower in all 18
 * scenario-rounds, 10-30% of a request's CPU).
 */
export type PlainStatement = <Row>(text: string, values: readonly unknown[]) => Promise<Row[]>;

const statements = new WeakMap<PrismaClient, PlainStatement>();

/** Called by `openDatabase` for the client it creates. */
export function attachPlainStatement(prisma: PrismaClient, run: PlainStatement): void {
  statements.set(prisma, run);
}

/**
 * Runs a read-only statement on the driver behind `db`. Falls back to `$queryRawUnsafe` (same result, Prisma's
 * cost) for a client `openDatabase` did not create, such as a transaction's.
 */
export function plainQuery<Row>(db: PrismaClient, text: string, values: readonly unknown[]): Promise<Row[]> {
  const run = statements.get(db);
  return run ? run<Row>(text, values) : db.$queryRawUnsafe<Row[]>(text, ...values);
}
