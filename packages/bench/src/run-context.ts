import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { repoRoot, serverMain, type Service, startService } from './processes';

// What every part of one `pnpm bench` run (main.ts) shares: the admin token and run id its servers and fixtures
// use, where its results and logs go, its log, and how it starts the built server.
export const ADMIN_TOKEN = randomBytes(24).toString('hex');
export const runId = Date.now().toString(36);
export const resultsDir = path.join(repoRoot, 'bench-results');
export const work = mkdtempSync(path.join(os.tmpdir(), 'works-api-bench-'));
export const log = (line: string) => console.log(line);

/** --server-node-args: every start of the server under test passes them (startServer, an --against build). */
export let serverNodeArgs: string[] = [];

/** From the options, once, before the first server starts. */
export function setServerNodeArgs(args: string[]): void {
  serverNodeArgs = args;
}

export function startServer(
  name: string,
  env: Record<string, string>,
  nodeArgs: string[] = [],
  countQueries = false,
): Promise<Service> {
  return startService({
    name,
    script: serverMain,
    env: { ...env, ADMIN_TOKEN },
    nodeArgs: [...serverNodeArgs, ...nodeArgs],
    countQueries,
    logFile: path.join(work, `${name.replace(/[^a-z0-9]+/gi, '-')}.log`),
  });
}
