import { constants, linkSync, lstatSync, openSync, renameSync, unlinkSync } from 'node:fs';
import { DumpError } from './dump-format';

// Where a dump is written: a new file of its own, never through a symlink, named only once complete (dump.ts).

/** True when `file` names anything, a dangling symlink included. */
export function pathExists(file: string): boolean {
  try {
    lstatSync(file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}

/** A new file, mode 0600, opened for writing; fails if the name exists (a symlink included). */
export function createExclusively(file: string): number {
  const { O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW } = constants;
  try {
    return openSync(file, O_WRONLY | O_CREAT | O_EXCL | (O_NOFOLLOW ?? 0), 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST')
      throw new DumpError(`${file} appeared while the dump started: another dump to the same file?`);
    throw error;
  }
}

/**
 * The complete dump takes its name. Without `force` by a hard link, which fails if the name exists (even one
 * made since the check at the start), then the partial name goes; with `force` by a rename, which replaces what
 * is there (a symlink is replaced, not followed).
 */
export function moveInto(partial: string, file: string, force: boolean): void {
  if (force) return renameSync(partial, file);
  try {
    linkSync(partial, file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') throw new DumpError(`${file} exists: pass --force to replace it`);
    // A file system without hard links: the check at the start stands.
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP') throw error;
    if (pathExists(file)) throw new DumpError(`${file} exists: pass --force to replace it`);
    return renameSync(partial, file);
  }
  unlinkSync(partial);
}
