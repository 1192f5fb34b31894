#!/usr/bin/env node
// Fails when openapi/api.yaml breaks its previous version, unless the break is marked intentional.
//
//   node openapi/scripts/check-breaking.mjs [--base <git revision>]
//
// The base is --base, else $API_BASE_REF, else the last release tag (`v*`, the newest reachable from the commit
// before HEAD, so that a release commit is compared with the release before it), else HEAD~1 (base-ref.mjs). It
// says which.
//
// The comparison is `redocly diff` with the `diff-recommended` rules (openapi/redocly.yaml): a change rated
// `major` (a removed path, operation or property, a new required input, a tighter limit, a new enum value in a
// response...) is breaking. The previous version is `git show <base>:openapi/api.yaml`; the current one is the
// file in the working tree (in CI: the commit under test, compared with the previous commit of main).
//
// Both versions first go through flatten-compositions.mjs: `redocly diff` does not resolve `allOf`/`oneOf`, and
// our problem types are compositions of the Problem schema (see that file).
//
// An intentional break is marked by adding a line to openapi/BREAKING_CHANGES_ACCEPTED in the same change: the
// check passes when that file has gained a line (not blank, not `#`) since <base>. A first commit, or a base
// without the spec, has nothing to compare and passes.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse, stringify } from 'yaml';
import { flattenCompositions } from './flatten-compositions.mjs';
import { harmlessBecause } from './judge-changes.mjs';
import { baseRevision } from './base-ref.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const config = path.join(here, '..', 'redocly.yaml');
const redocly = path.join(
  path.dirname(createRequire(import.meta.url).resolve('@redocly/cli/package.json')),
  'bin',
  'cli.js',
);

const git = (...gitArgs) => execFileSync('git', gitArgs, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
const tryGit = (...gitArgs) => {
  try {
    return git(...gitArgs);
  } catch {
    return undefined;
  }
};

const root = git('rev-parse', '--show-toplevel').trim();
const { base, why, commit: baseCommit, shallow } = baseRevision();
console.log(`comparing openapi/api.yaml with ${base} (${why})`);
const SPEC = 'openapi/api.yaml';
const ACCEPTED = 'openapi/BREAKING_CHANGES_ACCEPTED';

if (!baseCommit) {
  console.log(
    shallow
      ? `⚠ ${base} is not in this shallow clone: fetch more history (git fetch --deepen=1) to compare the spec.`
      : `✔ no ${base} to compare with (a first commit): nothing can break yet.`,
  );
  process.exit(shallow ? 1 : 0);
}
const previous = tryGit('show', `${baseCommit}:${SPEC}`);
if (previous === undefined) {
  console.log(`✔ ${base} has no ${SPEC}: nothing can break yet.`);
  process.exit(0);
}

const dir = mkdtempSync(path.join(tmpdir(), 'works-api-breaking-'));
try {
  const basePath = path.join(dir, 'base.yaml');
  const currentPath = path.join(dir, 'current.yaml');
  const reportPath = path.join(dir, 'report.json');
  const baseDocument = flattenCompositions(parse(previous));
  const currentDocument = flattenCompositions(parse(readFileSync(path.join(root, SPEC), 'utf8')));
  writeFileSync(basePath, stringify(baseDocument, { aliasDuplicateObjects: false }));
  writeFileSync(currentPath, stringify(currentDocument, { aliasDuplicateObjects: false }));
  const diff = spawnSync(
    process.execPath,
    [
      redocly,
      'diff',
      basePath,
      currentPath,
      '--config',
      config,
      '--fail-on',
      'major',
      '--format',
      'json',
      '-o',
      reportPath,
    ],
    { encoding: 'utf8', env: { ...process.env, REDOCLY_TELEMETRY: 'off' } },
  );
  if (!existsSync(reportPath)) {
    // The tool itself failed (an unreadable spec, say): that is no verdict, so it never passes.
    process.stderr.write(diff.stdout + diff.stderr);
    console.error('✘ redocly diff did not produce a report.');
    process.exit(1);
  }
  const report = JSON.parse(readFileSync(reportPath, 'utf8'));
  const rated = (report.changes ?? []).filter((change) => change.impact === 'major');
  // redocly rates some changes by their keyword alone; judge-changes.mjs looks again, and says why it passes one.
  const reasons = new Map();
  for (const change of rated) {
    const reason = harmlessBecause(change, baseDocument, currentDocument);
    if (reason) reasons.set(reason, [...(reasons.get(reason) ?? []), change.path]);
  }
  for (const [reason, paths] of reasons) {
    console.log(`  ✓ ${paths.length} change(s) rated major are compatible: ${reason}.`);
    for (const at of paths.slice(0, 3)) console.log(`      ${at}`);
    if (paths.length > 3) console.log(`      … and ${paths.length - 3} more`);
  }
  const breaking = rated.filter((change) => !harmlessBecause(change, baseDocument, currentDocument));
  if (breaking.length === 0) {
    if (diff.status !== 0 && rated.length === 0) {
      process.stderr.write(diff.stdout + diff.stderr);
      console.error('✘ redocly diff failed without reporting a breaking change.');
      process.exit(1);
    }
    const { minor = 0, patch = 0 } = report.summary ?? {};
    const judged = rated.length > 0 ? ` (and ${rated.length} rated major, judged compatible above)` : '';
    console.log(`✔ ${SPEC} is compatible with ${base}: 0 major, ${minor} minor, ${patch} patch change(s)${judged}.`);
    process.exit(0);
  }
  for (const change of breaking) {
    for (const verdict of (change.verdicts ?? []).filter((v) => v.impact === 'major')) {
      // The compared files are flattened copies: their line numbers mean nothing in api.yaml, their pointers do.
      const at = verdict.location ? ` (${verdict.location.pointer})` : '';
      console.log(`  ✖ ${verdict.message} [${verdict.ruleId}]${at}`);
    }
  }

  const accepted = addedLines(baseCommit);
  if (accepted.length > 0) {
    console.log(
      `✔ ${breaking.length} breaking change(s) to ${SPEC} against ${base}, accepted as intentional in ${ACCEPTED}:`,
    );
    for (const line of accepted) console.log(`    ${line}`);
    process.exit(0);
  }
  console.error(
    `✘ ${SPEC} has ${breaking.length} breaking change(s) against ${base}. /v1 changes only additively:\n` +
      `  make the change compatible, or, if the break is intended (and partners are told), add a line to\n` +
      `  ${ACCEPTED} saying what breaks and why, in the same change.`,
  );
  process.exit(1);
} finally {
  rmSync(dir, { recursive: true, force: true });
}

/** Lines added to the acceptance file since the base (working tree included), without blanks and comments. */
function addedLines(baseCommit) {
  const diff = tryGit('-C', root, 'diff', '--no-color', '--unified=0', baseCommit, '--', ACCEPTED) ?? '';
  const untracked = tryGit('-C', root, 'ls-files', '--others', '--exclude-standard', '--', ACCEPTED)?.trim();
  const added = untracked
    ? readFileSync(path.join(root, ACCEPTED), 'utf8').split('\n')
    : diff
        .split('\n')
        .filter((line) => line.startsWith('+') && !line.startsWith('+++'))
        .map((line) => line.slice(1));
  return added.map((line) => line.trim()).filter((line) => line !== '' && !line.startsWith('#'));
}
