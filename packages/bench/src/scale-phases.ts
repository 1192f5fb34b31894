import { Client } from 'pg';
import type { Fixtures } from './fixtures';
import { cpuMsOf, delay, type Service } from './processes';
import type { Measurement } from './report';
import type { ScaleHooks } from './scale-types';
import type { Scenario, Target } from './scenarios';

// One phase of the scale mode: the chosen scenarios measured in their order, once the server has settled.

export async function runPhase(
  chosen: Scenario[],
  server: Service,
  fixtures: Fixtures,
  hooks: ScaleHooks,
): Promise<Map<string, Measurement>> {
  const target: Target = { fixtures, pool: [] };
  const results = new Map<string, Measurement>();
  for (const scenario of inScaleOrder(chosen)) {
    const measured = await hooks.measure(scenario, server, target);
    results.set(scenario.id, measured);
    hooks.log(
      `  ${scenario.title.padEnd(30)} ${measured.rps.toFixed(0).padStart(6)} req/s   p99 ${measured.p99Ms.toFixed(0).padStart(5)} ms` +
        (measured.errors > 0 ? `   (errors: ${JSON.stringify(measured.statusCodes)})` : ''),
    );
  }
  return results;
}

/**
 * Reads first, then writes, then the mix: the writes add rows (create tenant adds a thousand tenants to the user
 * whose tenants list tenants reads), and "empty" should mean empty, not "after the writes of this run". The
 * popular-name create comes last: where it is slower than the client's 10 s timeout, the server is still working
 * on the abandoned requests after its run, and that would weigh on the next scenario.
 */
export function inScaleOrder(chosen: Scenario[]): Scenario[] {
  const rank = (s: Scenario) => (s.id === 'create-popular-tenant' ? 3 : { read: 0, write: 1, mixed: 2 }[s.kind]);
  return [...chosen].sort((a, b) => rank(a) - rank(b));
}

const SETTLE_MAX_MS = 90_000;

/**
 * The first clean-up rounds start with the server (up to 20,000 expired idempotency keys, 10,000 webhook events of
 * the data set): wait until they are over, or they weigh on the first scenario. Quiet means, for two seconds in a
 * row: no other statement running on the database (PostgreSQL), and the server process below 5% of a core (PGlite
 * runs in it). Bounded: after 90 s the run goes on.
 */
export async function settle(server: Service, postgresUrl?: string): Promise<void> {
  const deadline = Date.now() + SETTLE_MAX_MS;
  const client = postgresUrl ? new Client({ connectionString: postgresUrl }) : undefined;
  await client?.connect();
  try {
    let quiet = 0;
    while (quiet < 4 && Date.now() < deadline) {
      const cpuBefore = cpuMsOf(server.pid);
      await delay(500);
      const busyCpu = cpuMsOf(server.pid) - cpuBefore > 25;
      const busyDb = client
        ? Number(
            (
              await client.query<{ n: string }>(
                `SELECT count(*) AS n FROM pg_stat_activity
                 WHERE datname = current_database() AND pid <> pg_backend_pid() AND state = 'active'`,
              )
            ).rows[0]?.n,
          ) > 0
        : false;
      quiet = busyCpu || busyDb ? 0 : quiet + 1;
    }
  } finally {
    await client?.end();
  }
}
