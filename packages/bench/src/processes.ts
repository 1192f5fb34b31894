import { type ChildProcess, spawn } from 'node:child_process';
import { openSync, readFileSync, closeSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';

/** A server the benchmark started: the real works-api, or the baseline. */
export interface Service {
  readonly name: string;
  readonly url: string;
  readonly pid: number;
  readonly logFile: string;
  /** Milliseconds from spawn until it answered HTTP. */
  readonly readyAfterMs: number;
  /** SIGTERM, then SIGKILL if it has not exited after a while. */
  stop(): Promise<void>;
  /** The statements sent since the last call (only with `countQueries`). */
  queries(): Promise<{ count: number; statements: string[] }>;
}

export const repoRoot = path.resolve(__dirname, '../../..');
export const serverMain = path.join(repoRoot, 'packages/server/dist/main.js');
export const baselineMain = path.join(__dirname, 'baseline/server.js');

export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

export interface StartOptions {
  name: string;
  script: string;
  env: Record<string, string | undefined>;
  logFile: string;
  nodeArgs?: string[];
  /** Start-up can include PGlite's initdb and the migrations. */
  timeoutMs?: number;
  /** Preload count-queries.js and open an IPC channel to read its counts. */
  countQueries?: boolean;
}

/**
 * A fixed key for the benchmark's own databases (which it empties, or loads with made-up data): every run and
 * every server of a run open each other's sealed secrets. Never a production key.
 */
const BENCH_ENCRYPTION_KEYS = Buffer.from('works-api benchmark key, not secret').subarray(0, 32).toString('base64');

/** The ENCRYPTION_KEYS every server of the benchmark runs with (they also sign its paging cursors). */
export const benchEncryptionKeys = (): string => process.env.ENCRYPTION_KEYS ?? BENCH_ENCRYPTION_KEYS;

/** Starts a node process listening on a free loopback port and waits until it answers HTTP. */
export async function startService(options: StartOptions): Promise<Service> {
  const port = await freePort();
  const spawnedAt = Date.now();
  const out = openSync(options.logFile, 'a');
  const preload = options.countQueries ? ['-r', path.join(__dirname, 'count-queries.js')] : [];
  const child = spawn(process.execPath, [...preload, ...(options.nodeArgs ?? []), options.script], {
    env: {
      ...cleanEnv(),
      NODE_ENV: 'production',
      RATE_LIMIT_PER_MINUTE: '0',
      // The create-tenant scenario creates thousands of tenants as one user: lift the per-user cap (100).
      MAX_TENANTS_PER_USER: '1000000',
      // The request scenarios send thousands of requests from one tenant, most to one address: lift the email caps.
      MAX_EMAILS_PER_RECIPIENT_PER_DAY: '100000',
      MAX_EMAILS_PER_TENANT_PER_DAY: '10000000',
      MAX_EMAILS_PER_ADDRESS_PER_DAY: '100000',
      MAX_EMAILS_PER_SENDER_PER_DAY: '10000000',
      // The mail sender runs, as wherever emails are sent: with DATABASE_URL and no SMTP_URL it has nowhere to
      // send unless the dev mailbox is on, and a server without it leaves every email queued, its cost unmeasured
      // (DEV_MAILBOX=false in the environment measures that).
      DEV_MAILBOX: process.env.DEV_MAILBOX ?? 'true',
      // PostgreSQL needs ENCRYPTION_KEYS (secrets at rest): the benchmark's fixed key unless the caller set one.
      ENCRYPTION_KEYS: benchEncryptionKeys(),
      ...options.env,
      PORT: String(port),
      HOST: '127.0.0.1',
    },
    stdio: options.countQueries ? ['ignore', out, out, 'ipc'] : ['ignore', out, out],
  });
  closeSync(out);
  const url = `http://127.0.0.1:${port}`;
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const deadline = Date.now() + (options.timeoutMs ?? 120_000);
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`${options.name} exited while starting; its log (${options.logFile}):\n${tail(options.logFile)}`);
    }
    if (await answers(url)) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(
        `${options.name} did not answer within ${options.timeoutMs ?? 120_000} ms; log:\n${tail(options.logFile)}`,
      );
    }
    await delay(100);
  }
  return {
    name: options.name,
    url,
    pid: child.pid!,
    logFile: options.logFile,
    readyAfterMs: Date.now() - spawnedAt,
    stop: () => stopChild(child, exited),
    queries: () =>
      new Promise((resolve, reject) => {
        if (!child.send) return reject(new Error(`${options.name} was not started with countQueries`));
        child.once('message', (message) => resolve(message as { count: number; statements: string[] }));
        child.send('bench:queries');
      }),
  };
}

/** The environment without variables that would point the server elsewhere than the benchmark says. */
function cleanEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of ['DATABASE_URL', 'PGLITE_DIR', 'REDIS_URL', 'WEB_CONCURRENCY', 'PORT', 'HOST', 'NODE_OPTIONS'])
    delete env[name];
  return env;
}

async function answers(url: string): Promise<boolean> {
  try {
    // Any HTTP answer means the server listens (/healthz may not exist in every version).
    await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(1000) });
    return true;
  } catch {
    return false;
  }
}

async function stopChild(child: ChildProcess, exited: Promise<number | null>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  // A run stopped by its timer leaves a request or two in flight: let them finish first.
  await delay(500);
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  await exited;
  clearTimeout(timer);
}

export function tail(file: string, lines = 30): string {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

export const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The process and its descendants (a cluster primary and its workers). */
export function processTree(pid: number): number[] {
  const pids = [pid];
  for (let i = 0; i < pids.length; i++) {
    try {
      const children = readFileSync(`/proc/${pids[i]}/task/${pids[i]}/children`, 'utf8').trim();
      if (children) pids.push(...children.split(/\s+/).map(Number));
    } catch {
      // Gone, or not Linux.
    }
  }
  return pids;
}

/** Resident memory of a process tree in bytes (VmRSS summed), or undefined where /proc is missing. */
export function rssOf(pid: number): number | undefined {
  let total = 0;
  let found = false;
  for (const each of processTree(pid)) {
    try {
      const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${each}/status`, 'utf8'));
      if (match) {
        total += Number(match[1]) * 1024;
        found = true;
      }
    } catch {
      // Exited between the listing and the read.
    }
  }
  return found ? total : undefined;
}

/** Samples a process tree's RSS every few milliseconds until stopped; returns the peak seen. */
export function sampleRss(pid: number, everyMs = 50): () => number | undefined {
  const stop = sampleRssStats(pid, everyMs);
  return () => stop().peak;
}

/** Like sampleRss, with the mean of the samples too (steadier than any single reading). */
export function sampleRssStats(pid: number, everyMs = 50): () => { peak?: number; mean?: number } {
  let peak: number | undefined;
  let sum = 0;
  let count = 0;
  const sample = () => {
    const rss = rssOf(pid);
    if (rss === undefined) return;
    if (peak === undefined || rss > peak) peak = rss;
    sum += rss;
    count++;
  };
  sample();
  const timer = setInterval(sample, everyMs);
  return () => {
    clearInterval(timer);
    sample();
    return { peak, mean: count > 0 ? sum / count : undefined };
  };
}

const CLOCK_TICKS_PER_SECOND = 100; // USER_HZ, 100 on every Linux build that matters

/** CPU time used so far by a process tree (user + system), in milliseconds. */
export function cpuMsOf(pid: number): number {
  let ticks = 0;
  for (const each of processTree(pid)) {
    try {
      // Fields after the command name (which may contain spaces): utime and stime are the 12th and 13th.
      const stat = readFileSync(`/proc/${each}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // Exited.
    }
  }
  return (ticks * 1000) / CLOCK_TICKS_PER_SECOND;
}
