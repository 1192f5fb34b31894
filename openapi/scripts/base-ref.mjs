// The revision a change is compared with, for check:breaking (the spec) and check:compat (the client and the
// contract of the previous release against today's server): --base <rev>, else $API_BASE_REF, else the last release
// tag (`v*`, the newest reachable from the commit before HEAD, so that a release commit is compared with the release
// before it), else HEAD~1. Returns the revision, why it was chosen, and its commit (undefined when this clone does
// not have it: a first commit, or a shallow clone, which `shallow` tells apart).
import { execFileSync } from 'node:child_process';

const tryGit = (...args) => {
  try {
    return execFileSync('git', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch {
    return undefined;
  }
};

export function baseRevision(argv = process.argv.slice(2)) {
  const given = argv.includes('--base') ? argv[argv.indexOf('--base') + 1] : undefined;
  const lastRelease = tryGit('describe', '--tags', '--match', 'v*', '--abbrev=0', 'HEAD~1')?.trim();
  const base = given || process.env.API_BASE_REF || lastRelease || 'HEAD~1';
  const why = given
    ? 'given with --base'
    : process.env.API_BASE_REF
      ? 'from API_BASE_REF'
      : lastRelease
        ? 'the last release tag'
        : 'no release tag (v*) yet: the previous commit';
  const commit = tryGit('rev-parse', '--verify', '--quiet', `${base}^{commit}`)?.trim();
  const shallow = tryGit('rev-parse', '--is-shallow-repository')?.trim() === 'true';
  return { base, why, commit, shallow };
}

/** A file of the base revision, or undefined when it has none. */
export const fileAt = (commit, file) => tryGit('show', `${commit}:${file}`);
