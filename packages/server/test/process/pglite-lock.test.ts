import { readdirSync } from 'node:fs';
import { ADMIN_TOKEN, createUserAt } from '../support/server';
import {
  killAll,
  newPgliteFolder,
  removeDataDirs,
  runUntilExit,
  type ServerProcess,
  spawnServer,
} from '../support/process';

/**
 * One server process per embedded database folder (prisma/src/pglite-lock.ts): a second one refuses to start with
 * one line naming the folder and the owner's pid, and exits 1; two started at the same instant end with exactly
 * one serving; a lock left by a process killed with SIGKILL does not block the next start, which finds the killed
 * process's data. (A pid reused by another process, and other owners, are in prisma/src/pglite-lock.test.ts.)
 */
const embedded = process.env.DATABASE_URL ? describe.skip : describe;
if (process.env.DATABASE_URL)
  console.log('pglite-lock: the embedded database is not in use (DATABASE_URL is set); skipped');

const running: ServerProcess[] = [];
async function start(folder: string): Promise<ServerProcess> {
  const server = await spawnServer({ PGLITE_DIR: folder, ADMIN_TOKEN });
  running.push(server);
  return server;
}

afterAll(async () => {
  await killAll(running);
  removeDataDirs();
});

const createUser = async (server: ServerProcess) => (await createUserAt(server.baseUrl, 'lock')).apiKey;

const me = (server: ServerProcess, apiKey: string) =>
  fetch(`${server.baseUrl}/v1/me`, { headers: { Authorization: `Bearer ${apiKey}` } });

embedded('two processes on one PGlite folder', () => {
  it("refuses a second one with one line naming the folder and the owner's pid; a SIGKILLed owner's lock is no obstacle", async () => {
    const folder = await newPgliteFolder();
    const first = await start(folder);
    const second = await runUntilExit({ PGLITE_DIR: folder, ADMIN_TOKEN, PORT: '0' });
    expect(second.code).toBe(1);
    const lines = second.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      new RegExp(
        `^works-api: cannot open the database: the embedded database folder ${escape(folder)} is in use by another ` +
          `works-api process \\(pid ${first.child.pid}, since [^)]+\\): stop that process first`,
      ),
    );
    // The first one was not disturbed.
    expect((await fetch(`${first.baseUrl}/readyz`)).status).toBe(200);

    // Killed with SIGKILL, it leaves its lock behind, which does not block the next start; its data is there.
    const apiKey = await createUser(first);
    first.child.kill('SIGKILL');
    expect(await first.exited).toEqual({ code: null, signal: 'SIGKILL' });
    expect(owners(folder)).toEqual(['0.owner']);
    const next = await start(folder);
    expect((await me(next, apiKey)).status).toBe(200);
    expect(owners(folder)).toEqual(['1.owner']);

    // Released on a clean stop: nothing is left behind.
    next.child.kill('SIGTERM');
    expect(await next.exited).toEqual({ code: 0, signal: null });
    expect(owners(folder)).toEqual([]);
    // Three servers started one after the other (and one refused): over jest's 30 s on a busy machine.
  }, 90_000);

  it('lets exactly one of two processes started at the same instant serve', async () => {
    const folder = await newPgliteFolder();
    const outcomes = await Promise.allSettled([start(folder), start(folder)]);
    const serving = outcomes.filter((outcome) => outcome.status === 'fulfilled');
    const refused = outcomes.filter((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
    expect([serving.length, refused.length]).toEqual([1, 1]);
    expect(String(refused[0]!.reason)).toMatch(/is in use by another works-api process/);
  });
});

const owners = (folder: string) =>
  readdirSync(`${folder}.lock`)
    .filter((name) => name.endsWith('.owner'))
    .sort();
const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
