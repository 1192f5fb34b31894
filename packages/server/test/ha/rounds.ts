import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import {
  clusterCommand,
  healthy,
  killPostgres,
  type Member,
  nodeProcesses,
  signalAll,
  waitForCluster,
} from './cluster';
import { type Outage, outageAfter, type Writers } from './writers';

/**
 * The blows `pnpm ha:check` deals the cluster's leader under write load, one per round:
 *
 * - `kill`: its PostgreSQL is SIGKILLed (a crash); Patroni notices within a loop and the synchronous standby takes over.
 * - `machine`: its Patroni and every PostgreSQL process are SIGKILLed (the machine is gone); the leader key expires
 *   after the TTL, the synchronous standby takes over; then the node is started again and must rejoin as a standby.
 * - `freeze`: the node freezes as under a stalled disk or a paused VM: its PostgreSQL processes are stopped (SIGSTOP),
 *   Patroni's next loop blocks on them (a loop later), then Patroni is stopped too. They stay so until the key has
 *   expired and a standby has taken over and acknowledged writes of its own; then they are continued (SIGCONT).
 *   Patroni wakes in the middle of a loop that had read the cluster before the freeze ("I lead") and goes on to renew
 *   its key: the thawed node must find it taken and step down, never take the lead back and discard those writes.
 *   (Stopping everything at once lets Patroni start a fresh loop on waking, which hides the fault more often than not.)
 * - `pause`: Patroni and PostgreSQL stopped at once for half the TTL: the key must not expire, the leader carries on.
 */
export type RoundKind = 'kill' | 'machine' | 'freeze' | 'pause';
export const ROUND_KINDS: readonly RoundKind[] = ['kill', 'machine', 'freeze', 'pause'];

export interface Round {
  kind: RoundKind;
  /** What was done, for the report: "PostgreSQL killed", "machine lost", "frozen 38.1 s", "paused 10.0 s". */
  label: string;
  /** performance.now() when the leader was hit, and when the round was over (the cluster whole again, writes back). */
  hitAt: number;
  endedAt: number;
  outage: Outage;
}

export interface RoundContext {
  /** The cluster's folder (deploy/ha/cluster.sh's HA_CLUSTER_DIR). */
  dir: string;
  writers: Writers;
  /** Patroni's ttl and loop_wait (cluster.ts, timing()). */
  ttlMs: number;
  loopWaitMs: number;
  say: (line: string) => void;
  /** Processes stopped and not yet continued: the check continues them if it is cut short. */
  frozen: Set<number>;
}

/** After a freeze, the new leader keeps taking writes this long before the old one is continued. */
const WRITES_WHILE_FROZEN_MS = 10_000;
/** Bounds on every wait: a round that does not get there fails with what it last saw. */
const NEW_LEADER_MS = 90_000;
const WHOLE_AGAIN_MS = 180_000;
const WRITES_BACK_MS = 60_000;

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const leaderOf = (list: Member[]) => list.find((m) => m.role === 'leader');

/** What a node's Patroni decided after `offset` in its log (cluster.sh's log/<node>.log): its first few decisions. */
function decisions(dir: string, node: string, offset: number): string {
  const log = readFileSync(path.join(dir, 'log', `${node}.log`))
    .subarray(offset)
    .toString('utf8');
  const lines = log
    .split('\n')
    .filter((line) =>
      /(INFO|WARNING|ERROR): (Lock owner|Demoting|demoting|no action|failed to update|promoted|Could not take)/.test(
        line,
      ),
    )
    .map((line) => line.replace(/^\S+ \S+ (INFO|WARNING|ERROR): /, ''));
  return lines.slice(0, 4).join(' | ') || '(nothing logged)';
}

async function newLeader(old: string, what: string): Promise<Member> {
  const list = await waitForCluster(
    (l) => l.some((m) => m.role === 'leader' && m.name !== old && m.state === 'running'),
    NEW_LEADER_MS,
    `a leader other than ${old} (${what})`,
  );
  return leaderOf(list)!;
}

/** Resolves with the first write acknowledged after `since`; rejects after `timeoutMs`. */
async function acknowledgedAfter(writers: Writers, since: number, timeoutMs: number, what: string): Promise<number> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const ack = writers.acknowledged.find((a) => a.at > since);
    if (ack) return ack.at;
    if (performance.now() > deadline) throw new Error(`no write acknowledged within ${seconds(timeoutMs)} ${what}`);
    await sleep(100);
  }
}

/** The outage as the writers saw it, once a write sent after the blow has been acknowledged (bounded). */
async function outageSince(writers: Writers, hitAt: number, what: string): Promise<Outage> {
  const deadline = performance.now() + WRITES_BACK_MS;
  for (;;) {
    const outage = outageAfter(writers.attempts, hitAt);
    if (outage) return outage;
    if (performance.now() > deadline)
      throw new Error(`no write sent after the ${what} was acknowledged within ${seconds(WRITES_BACK_MS)}`);
    await sleep(200);
  }
}

function freeze(context: RoundContext, pids: number[]): void {
  for (const pid of pids) context.frozen.add(pid);
  signalAll(pids, 'SIGSTOP');
}

/** Continues the processes in the reverse order of `pids` (the order they were stopped in). */
export function thaw(context: Pick<RoundContext, 'frozen'>, pids = [...context.frozen]): void {
  signalAll([...pids].reverse(), 'SIGCONT');
  for (const pid of pids) context.frozen.delete(pid);
}

export async function runRound(kind: RoundKind, n: number, context: RoundContext): Promise<Round> {
  const { dir, writers, say } = context;
  const leader = leaderOf(await waitForCluster(healthy, WHOLE_AGAIN_MS, 'a whole cluster'))!;
  const before = writers.acknowledged.length;
  const tag = `round ${n} (${kind})`;
  const hitAt = performance.now();
  const since = () => seconds(performance.now() - hitAt);
  let label: string;
  let logOffset: number | undefined;
  if (kind === 'kill') {
    const pid = killPostgres(dir, leader.name);
    say(
      `${tag}: ${before.toLocaleString('en-US')} writes acknowledged so far; SIGKILL ${leader.name}'s PostgreSQL (pid ${pid})`,
    );
    const next = await newLeader(leader.name, 'after the kill');
    say(`${tag}: ${next.name} leads (timeline ${next.timeline}) ${since()} after the kill`);
    label = 'PostgreSQL killed';
  } else if (kind === 'machine') {
    const pids = nodeProcesses(dir, leader.name);
    signalAll(pids, 'SIGKILL');
    say(
      `${tag}: ${before.toLocaleString('en-US')} writes acknowledged so far; SIGKILL ${leader.name}'s Patroni and ${pids.length - 1} PostgreSQL processes`,
    );
    const next = await newLeader(leader.name, 'after the machine loss');
    say(
      `${tag}: ${next.name} leads (timeline ${next.timeline}) ${since()} after the loss; starting ${leader.name} again`,
    );
    await clusterCommand(dir, 'start-node', leader.name);
    label = 'machine lost';
  } else {
    const [patroni, ...postgres] = nodeProcesses(dir, leader.name);
    const pids = kind === 'freeze' ? [...postgres, patroni!] : [patroni!, ...postgres];
    if (kind === 'freeze') {
      freeze(context, postgres);
      say(
        `${tag}: ${before.toLocaleString('en-US')} writes acknowledged so far; SIGSTOP ${leader.name}'s ${postgres.length} PostgreSQL processes, its Patroni a loop later`,
      );
      await sleep(context.loopWaitMs + 1_000);
      freeze(context, [patroni!]);
    } else {
      freeze(context, pids);
      say(
        `${tag}: ${before.toLocaleString('en-US')} writes acknowledged so far; SIGSTOP ${leader.name}'s Patroni and ${postgres.length} PostgreSQL processes`,
      );
    }
    if (kind === 'freeze') {
      const next = await newLeader(leader.name, `while ${leader.name} is frozen`);
      const firstAck = await acknowledgedAfter(
        writers,
        performance.now(),
        WRITES_BACK_MS,
        `by ${next.name} while ${leader.name} is frozen`,
      );
      say(
        `${tag}: ${next.name} leads (timeline ${next.timeline}) and takes writes ${seconds(firstAck - hitAt)} into the freeze`,
      );
      await sleep(WRITES_WHILE_FROZEN_MS);
    } else {
      await sleep(context.ttlMs / 2);
    }
    const frozenFor = performance.now() - hitAt;
    const during = writers.acknowledged.filter((a) => a.at > hitAt).length;
    logOffset = statSync(path.join(dir, 'log', `${leader.name}.log`)).size;
    thaw(context, pids);
    say(
      `${tag}: SIGCONT ${leader.name} after ${seconds(frozenFor)} (TTL ${seconds(context.ttlMs)}); ${during.toLocaleString('en-US')} writes acknowledged meanwhile`,
    );
    label = `${kind === 'freeze' ? 'frozen' : 'paused'} ${seconds(frozenFor)}`;
  }
  const whole = await waitForCluster(
    healthy,
    WHOLE_AGAIN_MS,
    "the cluster whole again (every node on the leader's timeline)",
  );
  const after = leaderOf(whole)!;
  if (kind === 'freeze' || kind === 'pause')
    say(`${tag}: ${leader.name}'s Patroni after the SIGCONT: ${decisions(dir, leader.name, logOffset!)}`);
  say(
    `${tag}: cluster whole again ${since()} after the blow: ${after.name} leads (timeline ${after.timeline}), ${whole
      .filter((m) => m !== after)
      .map((m) => `${m.name} ${m.role}`)
      .join(', ')}`,
  );
  if (kind === 'freeze' && after.name === leader.name)
    say(`${tag}: the thawed ${leader.name} took the lead back from the standby promoted meanwhile`);
  const outage = await outageSince(writers, hitAt, label);
  say(
    `${tag}: no write acknowledged for ${seconds(outage.withoutWritesMs)}; ${outage.refused.toLocaleString('en-US')} attempts answered 503 (or cut off) over ${seconds(outage.refusedForMs)}`,
  );
  return { kind, label, hitAt, endedAt: performance.now(), outage };
}

/** Which rounds to run: HA_CHECK_ROUNDS, kinds separated by spaces or commas, in order (repeats allowed). */
export function parseRounds(value: string): RoundKind[] {
  const kinds = value.split(/[\s,]+/).filter(Boolean);
  const unknown = kinds.filter((k) => !ROUND_KINDS.includes(k as RoundKind));
  if (unknown.length || !kinds.length)
    throw new Error(`HA_CHECK_ROUNDS: ${unknown.join(', ') || '(none)'}: use ${ROUND_KINDS.join(', ')}`);
  return kinds as RoundKind[];
}
