import { createHash } from 'node:crypto';

/**
 * A parameterised statement sent straight to the driver Prisma itself uses (the same pg pool, or the same PGlite).
 *
 * The rule for which path a query takes: Prisma's query API is the default. A statement goes through `plainQuery`
 * (handle.ts) only when
 * 1. it runs on (nearly) every request and a same-run A/B (`pnpm bench --against`) shows the gain: the API-key lookup
 *    and the caller's membership. Done through `findUnique` instead, those two cost 0.1-0.4 ms more CPU per request
 *    (3 rounds: lower in all 18 scenario-rounds, 10-30% of a request's CPU); or
 * 2. it needs SQL that Prisma cannot send as one statement: a data-modifying CTE that writes a change and its
 *    webhook outbox row atomically, INSERT ... SELECT ... FOR SHARE, or a FOR UPDATE SKIP LOCKED claim.
 * 3. it folds several round trips of a read into one that Prisma cannot send: the capped lists of a tenant (a search,
 *    the tenant-wide request list, the events feed) read the caller's membership, the page and its capped count in
 *    one statement (packages/server/src/domain/member-page.ts). Same-run A/B on the production-shape data set,
 *    8 connections: 24-38% fewer server CPU ms per request on each of the five scale scenarios.
 * 4. it is the mail sender's (packages/server/src/mail/sender.ts), whose claim (rule 2) also reads what rendering
 *    each email needs (its request, work, tenant, owner or inviter, the address's mail_recipients row) and stores
 *    the round's answer links, and whose outcomes, those ready together, are recorded in one statement: per email,
 *    it took a Prisma `findUnique` with three includes, a recipient statement, a link insert and an outcome update.
 *    A/B against main (8e1123c): 1,500 queued emails sent through the dev mailbox, runs alternating (load average
 *    5-10 from other work): 0.26-0.27 transactions per email against 3.95-4.05, server CPU 0.54-0.65 ms per email
 *    against 3.1-4.0, PostgreSQL's backends 0.73-0.95 ms against 3.1-3.7 (docs/benchmarks.md).
 * Its row type is picked from the generated model types (`Pick<ApiKey, ...>`), never written by hand, so a schema
 * change that breaks the statement breaks the build.
 *
 * A plain statement is parsed and planned by PostgreSQL on every call, unless it is sent `prepared`
 * (`preparedQuery`): then each connection prepares it once, by a name derived from its text, and after a few calls
 * PostgreSQL keeps one generic plan for it. Only for statements whose best plan does not depend on the values
 * (lookups and writes by key, such as the API-key lookup and create request): a search or a capped list must stay
 * unprepared, since its plan depends on how common its words or filters are. Create request's statement took about
 * 0.3 ms of PostgreSQL's CPU to plan, about a third of its cost. PGlite ignores the flag.
 */
export type PlainStatement = <Row>(text: string, values: readonly unknown[], prepared?: boolean) => Promise<Row[]>;

const preparedNames = new Map<string, string>();

/** The name a prepared statement goes by on every connection: from its text, so that one text is one statement. */
export function preparedName(text: string): string {
  let name = preparedNames.get(text);
  if (name === undefined) preparedNames.set(text, (name = `w${createHash('sha1').update(text).digest('hex')}`));
  return name;
}

/** Sends a plain statement, in a span of its own when traces are on. */
export const traced = <Row>(text: string, send: () => Promise<Row[]>): Promise<Row[]> =>
  traceStatement ? traceStatement(text, send) : send();

type StatementTracer = <T>(text: string, run: () => Promise<T>) => Promise<T>;
let traceStatement: StatementTracer | undefined;

/** With traces on, each plain statement gets a span, like the statements Prisma sends (observability/tracing.ts). */
export function tracePlainStatements(tracer: StatementTracer | undefined): void {
  traceStatement = tracer;
}
