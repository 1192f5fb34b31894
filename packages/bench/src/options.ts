import path from 'node:path';
import { parseArgs } from 'node:util';
import type { ScenarioId } from './scenarios';
import { scenarios } from './scenarios';

/** The V8 flags `pnpm start` (root package.json) gives the server: the bench measures what users run. */
export const SERVER_NODE_ARGS = '--max-semi-space-size=4';

export interface Options {
  databases: Array<'postgres' | 'pglite'>;
  scenarios: ScenarioId[];
  durationS: number;
  warmupS: number;
  connections: number;
  /** Measure each scenario this many times, server and baseline in turn, and keep the median. */
  rounds: number;
  /** Also run the server with 2 workers (PostgreSQL). */
  cluster: boolean;
  /** Also measure latency at half the maximum throughput (PostgreSQL, one process). */
  halfRate: boolean;
  soak: boolean;
  soakRequests: number;
  profile: boolean;
  countQueries: boolean;
  /** Only the webhooks comparison: write scenarios without and with a subscribed endpoint, and delivery lag. */
  webhooks: boolean;
  compare?: string;
  /** Another build of the server (its dist/main.js) in the baseline's place: an A/B test of a change. */
  against?: string;
  /** Extra node flags for the server processes (--server-node-args=--max-old-space-size=96). */
  serverNodeArgs: string[];
  postgresUrl: string;
}

const usage = `pnpm bench [-- options]
  (default)              every scenario on PostgreSQL (1 and 2 processes) and on embedded PGlite, with the baseline
  --only postgres|pglite one database
  --scenarios a,b        some of: ${scenarios.map((s) => s.id).join(', ')}
  --duration S           seconds per measured run (default 6); --warmup S (default 1); --connections N (default 10)
  --rounds N             measure each scenario N times, alternating with the baseline, keep the median (default 1)
  --no-cluster           skip the 2-worker run;  --no-half-rate  skip the latency run at half the maximum rate
  --soak                 only the memory soak: ${'100,000'} mixed requests on PostgreSQL, RSS every 10,000
  --profile              only profiles: the server under --cpu-prof on PostgreSQL, one process per scenario
  --count-queries        only database round trips per request, server and baseline, on PostgreSQL
  --webhooks             only webhooks: the write scenarios on PostgreSQL without and with an endpoint subscribed
                         to every event (a healthy receiver on loopback), in turn, and delivery lag p50/p99
  --compare FILE         compare with an earlier bench-results/*.json
  --against MAIN_JS      A/B: another build of the server (its dist/main.js) takes the baseline's place, on
                         PostgreSQL, run in turn with this one on the same data (for before/after figures)
  --server-node-args=F   node flags for the server processes (default: those of pnpm start, ${SERVER_NODE_ARGS}),
                         e.g. --server-node-args="--max-semi-space-size=16"
  BENCH_DATABASE_URL     PostgreSQL database the benchmark owns and EMPTIES (its name must contain "bench";
                         default postgresql://postgres@127.0.0.1:5432/works_bench, created when missing)`;

export function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv.filter((arg) => arg !== '--'),
    options: {
      only: { type: 'string' },
      scenarios: { type: 'string' },
      duration: { type: 'string', default: '6' },
      warmup: { type: 'string', default: '1' },
      connections: { type: 'string', default: '10' },
      rounds: { type: 'string', default: '1' },
      'no-cluster': { type: 'boolean', default: false },
      'no-half-rate': { type: 'boolean', default: false },
      soak: { type: 'boolean', default: false },
      'soak-requests': { type: 'string', default: '100000' },
      profile: { type: 'boolean', default: false },
      'count-queries': { type: 'boolean', default: false },
      webhooks: { type: 'boolean', default: false },
      compare: { type: 'string' },
      against: { type: 'string' },
      'server-node-args': { type: 'string', default: SERVER_NODE_ARGS },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    console.log(usage);
    process.exit(0);
  }
  const number = (name: string, value: string, min: number) => {
    const parsed = Number(value);
    if (!Number.isFinite(parsed) || parsed < min)
      throw new Error(`--${name} must be a number of at least ${min}\n${usage}`);
    return parsed;
  };
  const known = new Set(scenarios.map((s) => s.id));
  const chosen = values.scenarios ? values.scenarios.split(',').map((s) => s.trim()) : [...known];
  for (const id of chosen) if (!known.has(id as ScenarioId)) throw new Error(`unknown scenario ${id}\n${usage}`);
  if (values.only !== undefined && values.only !== 'postgres' && values.only !== 'pglite') {
    throw new Error(`--only takes postgres or pglite\n${usage}`);
  }
  return {
    databases: values.only ? [values.only] : ['postgres', 'pglite'],
    scenarios: chosen as ScenarioId[],
    durationS: number('duration', values.duration, 1),
    warmupS: number('warmup', values.warmup, 0),
    connections: Math.round(number('connections', values.connections, 1)),
    rounds: Math.round(number('rounds', values.rounds, 1)),
    cluster: !values['no-cluster'],
    halfRate: !values['no-half-rate'],
    soak: values.soak,
    soakRequests: Math.round(number('soak-requests', values['soak-requests'], 1000)),
    profile: values.profile,
    countQueries: values['count-queries'],
    webhooks: values.webhooks,
    compare: values.compare,
    against: values.against && path.resolve(process.env.INIT_CWD ?? process.cwd(), values.against),
    serverNodeArgs: values['server-node-args'].split(/\s+/).filter(Boolean),
    postgresUrl: process.env.BENCH_DATABASE_URL || 'postgresql://postgres@127.0.0.1:5432/works_bench',
  };
}
