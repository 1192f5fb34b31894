import { createHash } from 'node:crypto';

/**
 * How a statement reaches the driver Prisma itself uses (the same pg pool, or the same PGlite): positional values,
 * optionally prepared. Only `sendStatement` (send.ts) calls it; statement modules never do.
 *
 * A prepared statement is parsed once per connection, by a name derived from its text, and after a few calls
 * PostgreSQL keeps one generic plan for it. Only for statements whose best plan does not depend on the values
 * (lookups and writes by key): a search or a capped list stays unprepared, since its plan depends on how common its
 * words or filters are. PGlite ignores the flag.
 */
export type DriverStatement = <Row>(text: string, values: readonly unknown[], prepared?: boolean) => Promise<Row[]>;

const preparedNames = new Map<string, string>();

/** The name a prepared statement goes by on every connection: from its text, so that one text is one statement. */
export function preparedName(text: string): string {
  let name = preparedNames.get(text);
  if (name === undefined) preparedNames.set(text, (name = `w${createHash('sha1').update(text).digest('hex')}`));
  return name;
}

/** Sends a statement, in a span of its own when traces are on. */
export const traced = <Row>(text: string, send: () => Promise<Row[]>): Promise<Row[]> =>
  traceStatement ? traceStatement(text, send) : send();

type StatementTracer = <T>(text: string, run: () => Promise<T>) => Promise<T>;
let traceStatement: StatementTracer | undefined;

/** With traces on, each statement gets a span, like the statements Prisma sends (observability/tracing.ts). */
export function traceStatements(tracer: StatementTracer | undefined): void {
  traceStatement = tracer;
}
