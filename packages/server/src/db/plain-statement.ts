import type { PrismaClient } from './generated/client';

/**
 * A parameterised statement sent straight to the driver Prisma itself uses (the same pg pool, or the same PGlite).
 *
 * For the two lookups every request makes (the API key, the caller's membership). Each Prisma 6.19 call, `$queryRaw`
 * included, compiles a query plan in WebAssembly and interprets it: about 0.45 ms of CPU on top of the 0.2 ms the
 * driver costs (measured with `pnpm bench`), which on these two lookups was a fifth of a request's CPU time.
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
