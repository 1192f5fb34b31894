import { mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { lockPgliteFolder, PgliteFolderInUseError } from './pglite-lock';

/** The lock's decisions about owners, in this process (the process tests cover separate processes). */
let folder: string;
beforeEach(() => {
  folder = path.join(mkdtempSync(path.join(tmpdir(), 'works-api-lock-')), 'pglite');
});
afterEach(() => rmSync(path.dirname(folder), { recursive: true, force: true }));

const writeOwner = (generation: number, owner: Record<string, unknown>) => {
  mkdirSync(`${folder}.lock`, { recursive: true });
  writeFileSync(
    `${folder}.lock/${generation}.owner`,
    JSON.stringify({ host: hostname(), since: '2026-01-01T00:00:00.000Z', ...owner }),
  );
};
const owners = () =>
  readdirSync(`${folder}.lock`)
    .filter((name) => name.endsWith('.owner'))
    .sort();

describe('lockPgliteFolder', () => {
  it('is exclusive within a process too, and free again once released', () => {
    const lock = lockPgliteFolder(folder);
    expect(() => lockPgliteFolder(folder)).toThrow(PgliteFolderInUseError);
    expect(() => lockPgliteFolder(folder)).toThrow(
      `the embedded database folder ${folder} is in use by another works-api process (pid ${process.pid}`,
    );
    lock.release();
    lock.release();
    expect(owners()).toEqual([]);
    lockPgliteFolder(folder).release();
  });

  it('takes over the lock of a process that no longer exists', () => {
    writeOwner(3, { pid: 2 ** 22 + 1, startTime: '1' }); // above Linux's pid_max: no such process
    const lock = lockPgliteFolder(folder);
    expect(owners()).toEqual(['4.owner']);
    lock.release();
  });

  (process.platform === 'linux' ? it : it.skip)('takes over a lock whose pid now belongs to another process', () => {
    writeOwner(0, { pid: process.pid, startTime: '1' }); // alive, but started at another time: a reused pid
    lockPgliteFolder(folder).release();
  });

  it('respects a live owner on another host while it keeps its file fresh, and not after', () => {
    writeOwner(0, { pid: 1, startTime: null, host: 'elsewhere.example' });
    expect(() => lockPgliteFolder(folder)).toThrow(/pid 1 on elsewhere\.example/);
    const longAgo = new Date(Date.now() - 60_000);
    utimesSync(`${folder}.lock/0.owner`, longAgo, longAgo);
    lockPgliteFolder(folder).release();
  });

  it('treats a file it cannot read as stale', () => {
    mkdirSync(`${folder}.lock`, { recursive: true });
    writeFileSync(`${folder}.lock/0.owner`, 'not json');
    lockPgliteFolder(folder).release();
  });
});
