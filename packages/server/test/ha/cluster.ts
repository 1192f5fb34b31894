import { execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

/**
 * The loopback HA cluster of deploy/ha/cluster.sh, driven from the failover check: install, start, find the leader,
 * kill its PostgreSQL, wait for the next one, stop. The cluster lives in its own folder (`dir`), so the check never
 * touches a cluster someone started with `pnpm ha:start`.
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

/** The members as Patroni lists them, from whichever node's REST API answers; empty when none does. */
export async function members(): Promise<Member[]> {
  for (const port of REST_PORTS) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/cluster`, { signal: AbortSignal.timeout(1_000) });
      if (res.ok) return ((await res.json()) as { members: Member[] }).members;
    } catch {
      // That node is down: ask the next.
    }
  }
  return [];
}

/** Healthy: every node running, a leader and a synchronous standby (the next leader) in place. */
export const healthy = (list: Member[], nodes = REST_PORTS.length): boolean =>
  list.length === nodes &&
  list.some((m) => m.role === 'leader') &&
  list.some((m) => m.role === 'sync_standby') &&
  list.every((m) => m.state === 'running' || m.state === 'streaming');

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

/** SIGKILLs the postmaster of `node` (read from its data folder's postmaster.pid); resolves with its pid. */
export function killPostgres(dir: string, node: string): number {
  const pid = Number(readFileSync(path.join(dir, node, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]);
  const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  if (!command.includes('postgres')) throw new Error(`pid ${pid} of ${node} is not a postgres process: ${command}`);
  process.kill(pid, 'SIGKILL');
  return pid;
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
