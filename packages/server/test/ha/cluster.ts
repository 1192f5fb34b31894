import { execFile, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

/**
 * The loopback HA cluster of deploy/ha/cluster.sh, driven from the failover check: install, start, find the leader,
 * kill, freeze or thaw its processes, wait for the next one, stop. The cluster lives in its own folder (`dir`), so the
 * check never touches a cluster someone started with `pnpm ha:start`.
 */
const run = promisify(execFile);

export const REPO = path.resolve(__dirname, '../../../..');
const SCRIPT = path.join(REPO, 'deploy/ha/cluster.sh');
const REST_PORTS = (process.env.HA_REST_PORTS ?? '8011 8012 8013').split(' ').map(Number);

export interface Member {
  name: string;
  /** leader, sync_standby, replica (or another of Patroni's roles). */
  role: string;
  state: string;
  port: number;
  timeline?: number;
  /** A standby's replication lag in bytes ("unknown" while it does not replicate). */
  lag?: number | string;
}

/** Runs a cluster.sh command with its output shown (prefixed lines `ha: …`); resolves with its stdout. */
export function clusterCommand(dir: string, ...args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [SCRIPT, ...args], {
      env: { ...process.env, HA_CLUSTER_DIR: dir },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve(stdout) : reject(new Error(`cluster.sh ${args.join(' ')} exited with ${code}`)),
    );
  });
}

/** GET on every node's REST API at once (a frozen node answers nothing): the first answer in node order. */
async function fromAnyNode<T>(endpoint: string): Promise<T | undefined> {
  const answers = await Promise.allSettled(
    REST_PORTS.map(async (port) => {
      const res = await fetch(`http://127.0.0.1:${port}${endpoint}`, { signal: AbortSignal.timeout(1_000) });
      if (!res.ok) throw new Error(`${res.status}`);
      return (await res.json()) as T;
    }),
  );
  return answers.find((a): a is PromiseFulfilledResult<Awaited<T>> => a.status === 'fulfilled')?.value;
}

/** The members as Patroni lists them (read from etcd by whichever node answers); empty when none does. */
export async function members(): Promise<Member[]> {
  return (await fromAnyNode<{ members: Member[] }>('/cluster'))?.members ?? [];
}

/** Patroni's settings that time a failover, from the cluster's dynamic configuration, in milliseconds. */
export async function timing(): Promise<{ ttlMs: number; loopWaitMs: number }> {
  const config = await fromAnyNode<{ ttl: number; loop_wait: number }>('/config');
  if (!config) throw new Error('no Patroni node answers GET /config');
  return { ttlMs: config.ttl * 1000, loopWaitMs: config.loop_wait * 1000 };
}

/**
 * Healthy: every node running, a leader and a synchronous standby (the next leader) in place, and every standby
 * replicating on the leader's timeline (a former leader counts once it has rejoined, not while it still runs on its
 * own timeline).
 */
export const healthy = (list: Member[], nodes = REST_PORTS.length): boolean => {
  const leader = list.find((m) => m.role === 'leader');
  return (
    list.length === nodes &&
    leader !== undefined &&
    list.some((m) => m.role === 'sync_standby') &&
    list.every((m) => m.state === 'running' || m.state === 'streaming') &&
    list.every((m) => m.timeline === leader.timeline && (m === leader || typeof m.lag === 'number'))
  );
};

/** Waits (up to `timeoutMs`) for the cluster to satisfy `predicate`; rejects with the last state seen. */
export async function waitForCluster(
  predicate: (list: Member[]) => boolean,
  timeoutMs: number,
  what: string,
): Promise<Member[]> {
  const deadline = Date.now() + timeoutMs;
  let last: Member[] = [];
  while (Date.now() < deadline) {
    last = await members();
    if (predicate(last)) return last;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`${what}: not within ${timeoutMs / 1000} s; last seen ${JSON.stringify(last)}`);
}

/** The pid in `file` if that process runs a command mentioning `name` (so a recycled pid is never signalled). */
function pidOf(file: string, name: string): number {
  const pid = Number(readFileSync(file, 'utf8').split('\n')[0]);
  const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  if (!command.includes(name)) throw new Error(`pid ${pid} (from ${file}) is not a ${name} process: ${command}`);
  return pid;
}

/** The postmaster of `node`, from its data folder's postmaster.pid. */
export const postmaster = (dir: string, node: string): number =>
  pidOf(path.join(dir, node, 'data', 'postmaster.pid'), 'postgres');

/** SIGKILLs the postmaster of `node`; resolves with its pid. */
export function killPostgres(dir: string, node: string): number {
  const pid = postmaster(dir, node);
  process.kill(pid, 'SIGKILL');
  return pid;
}

/**
 * Every process of `node`, as a machine would hold them: its Patroni first (from cluster.sh's pid file), then its
 * postmaster, then the postmaster's children (backends, WAL senders, background processes).
 */
export function nodeProcesses(dir: string, node: string): number[] {
  const patroni = pidOf(path.join(dir, 'run', `${node}.pid`), 'patroni');
  const master = postmaster(dir, node);
  const children = readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        // /proc/<pid>/stat: "pid (command) state ppid …"; the command may hold spaces, so read after its ")".
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === master;
      } catch {
        return false; // ended meanwhile
      }
    })
    .map(Number);
  return [patroni, master, ...children];
}

/** Sends `signal` to each pid in turn; a process that has ended meanwhile is skipped. */
export function signalAll(pids: readonly number[], signal: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
    }
  }
}

/** The installed versions, for the report. */
export async function versions(): Promise<string> {
  const first = async (file: string, args: string[]) => {
    try {
      const { stdout } = await run(file, args);
      return stdout.split('\n')[0]!.trim();
    } catch {
      return `${file}: unknown`;
    }
  };
  return [
    await first('patroni', ['--version']),
    (await first('etcd', ['--version'])).replace('etcd Version:', 'etcd'),
    (await first('haproxy', ['-v'])).replace(/ - https.*$/, '').replace(/ \d{4}\/\d\d\/\d\d/, ''),
  ].join(', ');
}
