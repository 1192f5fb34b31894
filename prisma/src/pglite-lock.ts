import { randomBytes } from 'node:crypto';
import {
  linkSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';

/**
 * One process per embedded database folder. PGlite has no lock of its own: two processes on one folder both
 * serve, and one's writes are silently lost. So the server takes this lock before it opens PGlite.
 *
 * The lock lives beside the folder (`<folder>.lock/`; PGlite refuses to create a database in a folder that is not
 * empty) as numbered owner files: `<n>.owner` holds the pid, start time and host of the process that owns
 * generation n, the highest present. A file appears complete or not at all (written aside, then hard-linked in,
 * which fails if the name exists), so two processes starting at the same instant cannot both claim the same
 * generation. A lock whose owner is gone (kill -9) is stale: the next process claims generation n + 1 and
 * removes the older files; if two race for it, exactly one link succeeds and the other sees a live owner.
 *
 * An owner is alive when its pid exists and, on Linux, still has the start time recorded in the file (so a pid
 * reused by another program does not hold the lock). An owner on another host (a shared volume) cannot be
 * checked that way: it counts as alive while it touches its file (every HEARTBEAT_MS), for STALE_AFTER_MS.
 */
const HEARTBEAT_MS = 10_000;
const STALE_AFTER_MS = 30_000;
const MAX_LOCK_ATTEMPTS = 20;

interface Owner {
  pid: number;
  /** Linux: the process's start time in clock ticks since boot (/proc/<pid>/stat); null elsewhere. */
  startTime: string | null;
  host: string;
  since: string;
}

export interface PgliteLock {
  release(): void;
}

export class PgliteFolderInUseError extends Error {
  override name = 'PgliteFolderInUseError';

  constructor(
    readonly folder: string,
    readonly owner: Owner,
  ) {
    const where = owner.host === hostname() ? '' : ` on ${owner.host}`;
    super(
      `the embedded database folder ${folder} is in use by another works-api process (pid ${owner.pid}${where}, since ${owner.since}): ` +
        'stop that process first, or give this one another PGLITE_DIR (several processes can share a DATABASE_URL instead)',
    );
  }
}

/** Takes the folder's lock, or throws PgliteFolderInUseError naming the process that holds it. */
export function lockPgliteFolder(folder: string): PgliteLock {
  const dataDir = path.resolve(folder);
  const lockDir = `${dataDir}.lock`;
  mkdirSync(lockDir, { recursive: true });
  const me: Owner = {
    pid: process.pid,
    startTime: startTimeOf(process.pid),
    host: hostname(),
    since: new Date().toISOString(),
  };
  for (let attempt = 0; attempt < MAX_LOCK_ATTEMPTS; attempt++) {
    const current = generations(lockDir).at(-1);
    if (current !== undefined) {
      const owner = readOwner(lockDir, current);
      if (owner === 'gone') continue; // released or cleaned up since we listed: look again
      if (owner !== 'unreadable' && isAlive(owner, ownerFile(lockDir, current)))
        throw new PgliteFolderInUseError(dataDir, owner);
    }
    const generation = (current ?? -1) + 1;
    if (!claim(lockDir, generation, me)) continue; // another process claimed it first: it is the owner to check
    for (const older of generations(lockDir).filter((n) => n < generation)) removeQuietly(ownerFile(lockDir, older));
    return holding(ownerFile(lockDir, generation));
  }
  throw new Error(`could not lock the embedded database folder ${dataDir}: its lock in ${lockDir} kept changing`);
}

const ownerFile = (lockDir: string, generation: number) => path.join(lockDir, `${generation}.owner`);

function generations(lockDir: string): number[] {
  return readdirSync(lockDir)
    .map((name) => /^(\d+)\.owner$/.exec(name)?.[1])
    .filter((n): n is string => n !== undefined)
    .map(Number)
    .sort((a, b) => a - b);
}

function readOwner(lockDir: string, generation: number): Owner | 'gone' | 'unreadable' {
  let text: string;
  try {
    text = readFileSync(ownerFile(lockDir, generation), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'gone';
    throw error;
  }
  try {
    const owner = JSON.parse(text) as Owner;
    return Number.isInteger(owner.pid) && typeof owner.host === 'string' ? owner : 'unreadable';
  } catch {
    return 'unreadable'; // not written by us (files are linked in complete): nobody we could ask, so stale
  }
}

/** Creates `<generation>.owner` atomically with our details; false when it exists already. */
function claim(lockDir: string, generation: number, me: Owner): boolean {
  const draft = path.join(lockDir, `draft-${process.pid}-${randomBytes(6).toString('hex')}`);
  writeFileSync(draft, JSON.stringify(me));
  try {
    linkSync(draft, ownerFile(lockDir, generation));
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    removeQuietly(draft);
  }
}

function isAlive(owner: Owner, file: string): boolean {
  if (owner.host !== hostname()) {
    // Another machine's process: only its heartbeat tells.
    try {
      return Date.now() - statSync(file).mtimeMs < STALE_AFTER_MS;
    } catch {
      return false;
    }
  }
  try {
    process.kill(owner.pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false; // no such process
  }
  // The pid exists; is it still the process that wrote the file? (A container's server is pid 1 every time.)
  const startTime = startTimeOf(owner.pid);
  return owner.startTime === null || startTime === null || startTime === owner.startTime;
}

/** Field 22 of /proc/<pid>/stat (after the parenthesised command name, which may hold spaces); null off Linux. */
function startTimeOf(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

function holding(file: string): PgliteLock {
  const heartbeat = setInterval(() => {
    const now = new Date();
    try {
      utimesSync(file, now, now);
    } catch {
      // The file is gone (someone removed the lock by hand): nothing to keep fresh.
    }
  }, HEARTBEAT_MS);
  heartbeat.unref();
  let released = false;
  return {
    release() {
      if (released) return;
      released = true;
      clearInterval(heartbeat);
      removeQuietly(file);
    },
  };
}

function removeQuietly(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    // Already gone.
  }
}
