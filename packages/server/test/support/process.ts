import { type ChildProcess, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PGLITE_EXTENSIONS } from '@works-api/prisma';
import { TEST_ENCRYPTION_KEYS } from './server';

/** The built server, as `pnpm start` runs it (turbo builds it before the tests). */
export const MAIN = path.resolve(__dirname, '../../dist/main.js');
/** The webhook worker, as `pnpm worker` runs it. */
export const WORKER = path.resolve(__dirname, '../../dist/worker.js');

export type LogLine = Record<string, unknown> & { msg?: string };

export interface ServerProcess {
  child: ChildProcess;
  baseUrl: string;
  port: number;
  /** Every JSON line written to stdout so far. */
  lines: LogLine[];
  stderr(): string;
  /** Resolves with the first line (already written or still to come) that matches. */
  waitForLine(matches: (line: LogLine) => boolean): Promise<LogLine>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * The Node flags of every process a test spawns (except the first-run suite's, which runs the README's command as
 * written). `--liftoff-only`: V8 compiles WebAssembly with its baseline compiler only. A process on the embedded
 * database otherwise spends about 1.5 s of CPU and 1.3 s of page faults (650 MB at its peak, against 260) optimising
 * PGlite's module while it opens, in each of the dozens of short-lived processes a run spawns: worth it in a server
 * that runs for hours, not here. Nothing a test checks depends on it but speed.
 */
export const TEST_NODE_ARGS = ['--liftoff-only'];

const dataDirs: string[] = [];

/** Deletes the embedded data folders `databaseEnv` made (call in afterAll, once the servers have exited). */
export function removeDataDirs(): void {
  for (const dir of dataDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/**
 * The suite's PostgreSQL, or a new embedded data folder: the environment a spawned server needs for its
 * database. The folder is unpacked from the suite's migrated template, so the server skips initdb.
 */
export async function databaseEnv(): Promise<Record<string, string>> {
  const url = process.env.DATABASE_URL;
  if (url) return { DATABASE_URL: url, ENCRYPTION_KEYS: TEST_ENCRYPTION_KEYS };
  return { PGLITE_DIR: await newPgliteFolder() };
}

/** A new embedded data folder (removed by `removeDataDirs`), unpacked from the migrated template when there is one. */
export async function newPgliteFolder(): Promise<string> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'works-api-process-'));
  dataDirs.push(dataDir, `${dataDir}.lock`, `${dataDir}.key`);
  const template = process.env.WORKS_API_PGLITE_TEMPLATE;
  if (template && existsSync(`${template}.dir`)) {
    cpSync(`${template}.dir`, dataDir, { recursive: true }); // unpacked once by the global setup
  } else if (template) {
    const pglite = new PGlite(dataDir, {
      extensions: PGLITE_EXTENSIONS,
      loadDataDir: new Blob([readFileSync(template)]),
    });
    await pglite.waitReady;
    await pglite.close();
  }
  return dataDir;
}

function childEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run pnpm build first`);
  // Only what the test chooses: nothing leaks in from the environment the tests run in.
  // No mail sender unless a test asks for one: on a shared PostgreSQL it would send other test files' emails.
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    LOG_LEVEL: 'info',
    MAIL_SENDER: 'false',
    // Load and fault tests send runs of requests to one address: email caps no test reaches (mail-limits tests them).
    MAX_EMAILS_PER_RECIPIENT_PER_DAY: '100000',
    MAX_EMAILS_PER_TENANT_PER_DAY: '10000000',
    MAX_EMAILS_PER_ADDRESS_PER_DAY: '100000',
    MAX_EMAILS_PER_SENDER_PER_DAY: '10000000',
    // PostgreSQL needs ENCRYPTION_KEYS; the suite's, so that a spawned server opens what the tests sealed.
    ...(env.DATABASE_URL && { ENCRYPTION_KEYS: TEST_ENCRYPTION_KEYS }),
    ...env,
  };
}

/**
 * Starts `node dist/main.js` on a free port and resolves once it listens (rejects with its stderr if it exits);
 * with `untilListening: false`, as soon as it has printed its first line. `script: WORKER` starts the webhook
 * worker instead (which never listens). `nodeArgs` go to Node before the script (TEST_NODE_ARGS unless given), `cwd`
 * is the process's folder.
 */
export async function spawnServer(
  env: Record<string, string>,
  { untilListening = true, script = MAIN, nodeArgs = TEST_NODE_ARGS, cwd = undefined as string | undefined } = {},
): Promise<ServerProcess> {
  const child = spawn(process.execPath, [...nodeArgs, script], {
    ...(cwd && { cwd }),
    env: childEnv({ PORT: '0', ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: LogLine[] = [];
  const waiters: Array<{ matches: (line: LogLine) => boolean; resolve: (line: LogLine) => void }> = [];
  let stderr = '';
  let pending = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  child.stdout.on('data', (chunk: Buffer) => {
    pending += chunk.toString('utf8');
    const complete = pending.split('\n');
    pending = complete.pop()!;
    for (const text of complete.filter(Boolean)) {
      const line = JSON.parse(text) as LogLine;
      lines.push(line);
      for (const waiter of waiters.filter((w) => w.matches(line))) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(line);
      }
    }
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const waitForLine = (matches: (line: LogLine) => boolean) =>
    new Promise<LogLine>((resolve, reject) => {
      const found = lines.find(matches);
      if (found) return resolve(found);
      waiters.push({ matches, resolve });
      void exited.then(({ code }) => reject(new Error(`the server exited (${code}) first; stderr: ${stderr}`)));
    });
  const listening = await waitForLine((line) => !untilListening || typeof line.url === 'string');
  const baseUrl = (typeof listening.url === 'string' ? listening.url : 'http://127.0.0.1:0').replace(/\/v1$/, '');
  return { child, baseUrl, port: Number(new URL(baseUrl).port), lines, stderr: () => stderr, waitForLine, exited };
}

/**
 * Clean-up after a test: kills (SIGKILL) every process in `servers` that is still running, waits until each has
 * exited, and empties the list. A process that already exited, by itself or by a signal, is left alone.
 */
export async function killAll(servers: ServerProcess[]): Promise<void> {
  const stopping = servers.splice(0);
  for (const server of stopping)
    if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGKILL');
  await Promise.all(stopping.map((server) => server.exited));
}

/** Runs the server until it exits by itself (a configuration error), killing it if it starts instead. */
export async function runUntilExit(
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [...TEST_NODE_ARGS, MAIN], {
    env: childEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const guard = setTimeout(() => child.kill('SIGKILL'), 15_000);
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  clearTimeout(guard);
  return { code, stdout, stderr };
}
