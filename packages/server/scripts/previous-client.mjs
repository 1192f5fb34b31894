#!/usr/bin/env node
// Old clients against the new server (`pnpm check:compat`): the client of the previous release runs the contract
// suite against today's server, every response of its operations checked, strictly, against the previous release's
// contract as it was written (a partner's pinned validator). check:breaking compares the two specs; this runs them.
//
//   node scripts/previous-client.mjs [--base <git revision>]
//
// The previous release is the base of openapi/scripts/base-ref.mjs, as check:breaking picks it: --base, else
// $API_BASE_REF, else the last release tag (`v*`), else the previous commit. Its packages/client/src is bundled (with
// today's install of its two dependencies, openapi-fetch and standardwebhooks) and its openapi/api.yaml copied into a
// scratch folder, which test/contract/support/contract.ts reads from CONTRACT_PREVIOUS. Operations added since the
// previous release go through today's client. A base without the client or the spec has nothing to run.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { baseRevision, fileAt } from '@works-api/openapi/scripts/base-ref.mjs';

const serverDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const clientDir = path.resolve(serverDir, '..', 'client');
const { base, why, commit, shallow } = baseRevision();
console.log(`check:compat: the client and the contract of ${base} (${why}) against today's server`);
if (!commit) {
  console.log(
    shallow
      ? `⚠ ${base} is not in this shallow clone: fetch more history (git fetch --deepen=1).`
      : `✔ no ${base} (a first commit): no earlier client to run.`,
  );
  process.exit(shallow ? 1 : 0);
}
const previousSpec = fileAt(commit, 'openapi/api.yaml');
const hasClient = fileAt(commit, 'packages/client/src/index.ts') !== undefined;
if (previousSpec === undefined || !hasClient) {
  console.log(`✔ ${base} has no client or no contract: nothing to run.`);
  process.exit(0);
}

const scratch = mkdtempSync(path.join(tmpdir(), 'works-api-previous-'));
try {
  const sources = path.join(scratch, 'sources');
  mkdirSync(sources);
  const archive = execFileSync('git', ['archive', commit, 'packages/client/src'], {
    cwd: path.resolve(serverDir, '..', '..'),
    maxBuffer: 64 * 1024 * 1024,
  });
  execFileSync('tar', ['-x', '-C', sources], { input: archive });
  writeFileSync(path.join(scratch, 'api.yaml'), previousSpec);
  // esbuild, as the client's own build (tsup) has it: one CommonJS file, openapi-fetch and standardwebhooks inside.
  const esbuild = createRequire(createRequire(path.join(clientDir, 'package.json')).resolve('tsup'))('esbuild');
  esbuild.buildSync({
    entryPoints: [path.join(sources, 'packages/client/src/index.ts')],
    outfile: path.join(scratch, 'client.cjs'),
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    nodePaths: [path.join(clientDir, 'node_modules')],
    logLevel: 'error',
  });
  const jest = createRequire(path.join(serverDir, 'package.json')).resolve('jest/bin/jest');
  const run = spawnSync(process.execPath, [jest, 'test/contract/contract.test.ts', '--selectProjects', 'integration'], {
    cwd: serverDir,
    stdio: 'inherit',
    env: {
      ...process.env,
      CONTRACT_PREVIOUS: scratch,
      NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --experimental-vm-modules --disable-warning=ExperimentalWarning`,
    },
  });
  if (run.status !== 0) {
    console.error(`✘ the client of ${base} failed against today's server, or a response broke its contract (above).`);
    process.exit(1);
  }
  console.log(`✔ the client and the contract of ${base} work against today's server.`);
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
