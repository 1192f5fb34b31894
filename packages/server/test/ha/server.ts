import { type ChildProcess, spawn } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import path from 'node:path';
import { REPO } from './cluster';

/** The built server, as `pnpm ha:check` runs it (`node dist/main.js`). */
const MAIN = path.join(REPO, 'packages/server/dist/main.js');

export interface Server {
  child: ChildProcess;
  lines: Array<Record<string, unknown>>;
  exited: Promise<number | null>;
}

/** Starts the built server; every line it writes is also appended to `logFile`. */
export async function startServer(env: Record<string, string>, logFile: string): Promise<Server> {
  const child = spawn(process.execPath, ['--max-semi-space-size=4', MAIN], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: Array<Record<string, unknown>> = [];
  let stderr = '';
  let pending = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
    appendFileSync(logFile, chunk);
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const listening = new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      pending += chunk.toString('utf8');
      const complete = pending.split('\n');
      pending = complete.pop()!;
      for (const text of complete.filter(Boolean)) {
        appendFileSync(logFile, `${text}\n`);
        const line = JSON.parse(text) as Record<string, unknown>;
        lines.push(line);
        if (typeof line.url === 'string') resolve();
      }
    });
    void exited.then((code) => reject(new Error(`the server exited (${code}) before listening: ${stderr}`)));
  });
  await listening;
  return { child, lines, exited };
}

export async function json<T>(res: Response | Promise<Response>, expected: number): Promise<T> {
  const answer = await res;
  if (answer.status !== expected) throw new Error(`${answer.url}: ${answer.status} ${await answer.text()}`);
  return (await answer.json()) as T;
}
