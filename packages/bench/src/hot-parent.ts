import type { Request } from 'autocannon';
import { callApi } from './fixtures';
import { runLoad } from './load';

/**
 * Writes into one parent against the same writes spread over 16 parents: one user's tenants (against 16 users'),
 * one tenant's works (against 16 tenants'), one work's requests (against 16 works'), on one server process, at 16
 * and at 64 connections. Hot and spread take turns, `rounds` times; the ratio is of the medians. A ratio under 1
 * is writes queueing on something their parent shares (a counter row, a cap check).
 */
export interface HotParentRow {
  writes: string;
  connections: number;
  hotRps: number;
  spreadRps: number;
  /** Hot as a share of spread. */
  ratio: number;
}

export const HOT_PARENT_CONNECTIONS = [16, 64] as const;
const PARENTS = 16;

interface Parent {
  apiKey: string;
  tenantId: string;
  workId: string;
}

let sequence = 0;
// Not ending in a number: names that do ("Hot work 57") are a numbered series, whose base's slug counter (the next
// free "-n" after a collision) is one row per tenant, or per service for tenants, that every creation of the series
// takes in turn. That row is the same for one parent and 16 users, so it would hide what the parent shares.
const uniqueName = (what: string) => `${what} ${process.pid} ${(++sequence).toString(36)}x`;

/** Each parent is a user of its own with a tenant and a work in it; parent 0 is the hot one. */
async function createParents(baseUrl: string, adminToken: string, runId: string): Promise<Parent[]> {
  const parents: Parent[] = [];
  for (let i = 0; i < PARENTS; i++) {
    const { apiKey } = await callApi<{ apiKey: { secret: string } }>(baseUrl, adminToken, 'POST', '/v1/admin/users', {
      email: `hot-${runId}-${i}@example.com`,
      firstName: 'Hot',
      lastName: `Parent ${i}`,
    });
    const key = apiKey.secret;
    const { tenant } = await callApi<{ tenant: { id: string } }>(baseUrl, key, 'POST', '/v1/tenants', {
      name: `Hot parent ${runId} ${i}`,
    });
    const { work } = await callApi<{ work: { id: string } }>(baseUrl, key, 'POST', `/v1/tenants/${tenant.id}/works`, {
      name: `Hot parent work ${i}`,
    });
    parents.push({ apiKey: key, tenantId: tenant.id, workId: work.id });
  }
  return parents;
}

/** One kind of write: its path and body for a parent. */
interface Write {
  title: string;
  path: (parent: Parent) => string;
  body: () => string;
}

const writes: Write[] = [
  {
    title: "create tenant (one user's)",
    path: () => '/v1/tenants',
    body: () => JSON.stringify({ name: uniqueName('Hot tenant') }),
  },
  {
    title: "create work (one tenant's)",
    path: (parent) => `/v1/tenants/${parent.tenantId}/works`,
    body: () => JSON.stringify({ name: uniqueName('Hot work') }),
  },
  {
    title: "create request (one work's)",
    path: (parent) => `/v1/tenants/${parent.tenantId}/works/${parent.workId}/requests`,
    // Each to an address of its own, as a work's requests go: one address takes at most
    // MAX_EMAILS_PER_RECIPIENT_PER_DAY (20 by default) a day, each counted exactly under that address's one row.
    body: () =>
      JSON.stringify({
        title: 'Confirm the figures',
        recipient: { email: `${uniqueName('r').replace(/ /g, '-')}@example.com` },
      }),
  },
];

/** The write sent to `parents` in turn (one of them: hot; all of them: spread). */
function requestsTo(write: Write, parents: Parent[]): Request[] {
  let next = 0;
  return [
    {
      method: 'POST',
      setupRequest: (req) => {
        const parent = parents[next++ % parents.length]!;
        return {
          ...req,
          path: write.path(parent),
          headers: { Authorization: `Bearer ${parent.apiKey}`, 'Content-Type': 'application/json' },
          body: write.body(),
        };
      },
    },
  ];
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

export async function hotParentComparison(
  baseUrl: string,
  adminToken: string,
  runId: string,
  options: { durationS: number; warmupS: number; rounds: number },
  log: (line: string) => void,
): Promise<HotParentRow[]> {
  const parents = await createParents(baseUrl, adminToken, runId);
  const rows: HotParentRow[] = [];
  for (const write of writes) {
    for (const connections of HOT_PARENT_CONNECTIONS) {
      const run = async (to: Parent[], durationS: number) => {
        const result = await runLoad({ url: baseUrl, requests: requestsTo(write, to), connections, durationS });
        if (result.errors > 0)
          throw new Error(`${write.title} at ${connections} connections: ${JSON.stringify(result.statusCodes)}`);
        return result.rps;
      };
      if (options.warmupS > 0) await run(parents, options.warmupS);
      const hot: number[] = [];
      const spread: number[] = [];
      for (let round = 0; round < options.rounds; round++) {
        hot.push(await run(parents.slice(0, 1), options.durationS));
        spread.push(await run(parents, options.durationS));
      }
      const row = {
        writes: write.title,
        connections,
        hotRps: median(hot),
        spreadRps: median(spread),
        ratio: median(hot) / median(spread),
      };
      rows.push(row);
      log(`  ${formatHotParentRow(row)}`);
    }
  }
  return rows;
}

export function formatHotParentRow(row: HotParentRow): string {
  return (
    `${row.writes.padEnd(30)} ${String(row.connections).padStart(3)} connections: one parent ` +
    `${row.hotRps.toFixed(0).padStart(5)} req/s, 16 parents ${row.spreadRps.toFixed(0).padStart(5)} req/s, ` +
    `ratio ${row.ratio.toFixed(2)} (target 0.90)`
  );
}
