import path from 'node:path';
import { parseArgs } from 'node:util';
import type { ScenarioId } from './scenarios';
import { scaleScenarios } from './scale-scenarios';
import { scenarios } from './scenarios';

export type ScaleShape = 'production' | 'pglite' | 'small';

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
  /**
   * The session-against-key comparison (issue 40): `only` (--credentials), `also` after the PostgreSQL modes (the
   * default), or `skip` (--no-credentials).
   */
  credentials: 'only' | 'also' | 'skip';
  /** The hot-parent comparison: 'only' it, 'also' after the PostgreSQL runs (the default), or 'skip' it. */
  hotParent: 'only' | 'also' | 'skip';
  /** The bulk-send comparison (issue 41): 'only' it, 'also' after the PostgreSQL runs (the default), or 'skip' it. */
  bulk: 'only' | 'also' | 'skip';
  /** Only the scale mode: every scenario on an empty database, then on the large data set, side by side. */
  scale: boolean;
  /** The large data set's shape for every database (default: production on PostgreSQL, pglite on PGlite). */
  scaleShape?: ScaleShape;
  compare?: string;
  /** Write the JSON results here instead of bench-results/<time>.json. */
  out?: string;
  /** Another build of the server (its dist/main.js) in the baseline's place: an A/B test of a change. */
  against?: string;
  /** Environment of the other build (--against-env "OTEL_TRACES_EXPORTER=otlp …"): the same build with a setting on. */
  againstEnv: Record<string, string>;
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
  --hot-parent           only the hot-parent comparison on PostgreSQL: writes into one parent (one user's tenants,
                         one tenant's works, one work's requests) against 16 parents, at 16 and 64 connections
                         (also run after the PostgreSQL scenarios, unless --no-hot-parent or --against)
  --bulk                 only bulk send on PostgreSQL: single creates, then batches of 100 and 1,000 (requests/s,
                         p50/p99 per batch), the mail sender draining a batch's 1,000 emails against 1,000 single
                         creates', and single creates' p99 in the same work while batches of 1,000 run
                         (also run after the PostgreSQL scenarios, unless --no-bulk or --against)
  --credentials          only the same requests with a full API key and with a session cookie (CPU per request)
  --no-credentials       skip that comparison (it runs after the PostgreSQL scenarios by default)
  --webhooks             only webhooks: the write scenarios on PostgreSQL without and with an endpoint subscribed
                         to every event (a healthy receiver on loopback), in turn, and delivery lag p50/p99
  --scale                only the scale mode: every scenario, plus ${scaleScenarios.map((s) => s.id).join(', ')},
                         on an empty database, then on the large data set loaded with SQL (production shape on
                         PostgreSQL, the pglite shape on PGlite), req/s and p99 side by side; defaults to
                         --duration 3 --warmup 1
  --shape NAME           the scale mode's data set on every database: production, pglite or small (a smoke test)
  --compare FILE         compare with an earlier bench-results/*.json
  --out FILE             write the JSON results there instead of bench-results/<time>.json
  --against MAIN_JS      A/B: another build of the server (its dist/main.js) takes the baseline's place, on
                         PostgreSQL, run in turn with this one on the same data (for before/after figures), in a
                         database of its own that it migrates itself (BENCH_DATABASE_URL's name + "_against")
  --against-env "A=1 B=2" environment variables for the --against build only: with --against packages/server/dist/main.js,
                         an A/B of a setting (e.g. tracing on) on the same build
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
      duration: { type: 'string' },
      warmup: { type: 'string' },
      connections: { type: 'string', default: '10' },
      rounds: { type: 'string', default: '1' },
      'no-cluster': { type: 'boolean', default: false },
      'no-half-rate': { type: 'boolean', default: false },
      soak: { type: 'boolean', default: false },
      'soak-requests': { type: 'string', default: '100000' },
      profile: { type: 'boolean', default: false },
      'count-queries': { type: 'boolean', default: false },
      webhooks: { type: 'boolean', default: false },
      credentials: { type: 'boolean', default: false },
      'no-credentials': { type: 'boolean', default: false },
      'hot-parent': { type: 'boolean', default: false },
      'no-hot-parent': { type: 'boolean', default: false },
      bulk: { type: 'boolean', default: false },
      'no-bulk': { type: 'boolean', default: false },
      scale: { type: 'boolean', default: false },
      shape: { type: 'string' },
      compare: { type: 'string' },
      out: { type: 'string' },
      against: { type: 'string' },
      'against-env': { type: 'string' },
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
  // The scale mode's own scenarios need its fixtures, and the baseline does not implement them.
  const known = new Set([...scenarios, ...(values.scale ? scaleScenarios : [])].map((s) => s.id));
  const chosen = values.scenarios ? values.scenarios.split(',').map((s) => s.trim()) : [...known];
  for (const id of chosen) {
    if (known.has(id as ScenarioId)) continue;
    const scaleOnly = scaleScenarios.some((s) => s.id === id);
    throw new Error(`${scaleOnly ? `scenario ${id} runs only with --scale` : `unknown scenario ${id}`}\n${usage}`);
  }
  const shape = values.shape;
  if (shape !== undefined && (!values.scale || !['production', 'pglite', 'small'].includes(shape)))
    throw new Error(`--shape takes production, pglite or small, with --scale\n${usage}`);
  if (values.only !== undefined && values.only !== 'postgres' && values.only !== 'pglite') {
    throw new Error(`--only takes postgres or pglite\n${usage}`);
  }
  return {
    databases: values.only ? [values.only] : ['postgres', 'pglite'],
    scenarios: chosen as ScenarioId[],
    durationS: number('duration', values.duration ?? (values.scale ? '3' : '6'), 1),
    warmupS: number('warmup', values.warmup ?? '1', 0),
    connections: Math.round(number('connections', values.connections, 1)),
    rounds: Math.round(number('rounds', values.rounds, 1)),
    cluster: !values['no-cluster'],
    halfRate: !values['no-half-rate'],
    soak: values.soak,
    soakRequests: Math.round(number('soak-requests', values['soak-requests'], 1000)),
    profile: values.profile,
    countQueries: values['count-queries'],
    webhooks: values.webhooks,
    credentials: values.credentials ? 'only' : values['no-credentials'] ? 'skip' : 'also',
    hotParent: values['hot-parent'] ? 'only' : values['no-hot-parent'] ? 'skip' : 'also',
    bulk: values.bulk ? 'only' : values['no-bulk'] ? 'skip' : 'also',
    scale: values.scale,
    ...(shape !== undefined && { scaleShape: shape as ScaleShape }),
    compare: values.compare,
    out: values.out && path.resolve(process.env.INIT_CWD ?? process.cwd(), values.out),
    against: values.against && path.resolve(process.env.INIT_CWD ?? process.cwd(), values.against),
    againstEnv: againstEnvOf(values['against-env'], values.against),
    serverNodeArgs: values['server-node-args'].split(/\s+/).filter(Boolean),
    postgresUrl: process.env.BENCH_DATABASE_URL || 'postgresql://postgres@127.0.0.1:5432/works_bench',
  };
}

function againstEnvOf(value: string | undefined, against: string | undefined): Record<string, string> {
  if (value === undefined) return {};
  if (against === undefined) throw new Error(`--against-env needs --against\n${usage}`);
  const env: Record<string, string> = {};
  for (const pair of value.split(/\s+/).filter(Boolean)) {
    const match = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(pair);
    if (!match) throw new Error(`--against-env takes NAME=value pairs separated by spaces, not "${pair}"\n${usage}`);
    env[match[1]!] = match[2]!;
  }
  return env;
}
