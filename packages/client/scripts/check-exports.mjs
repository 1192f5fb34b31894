#!/usr/bin/env node
// Packs the client as `pnpm publish` would (workspace: and catalog: versions resolved) and checks the tarball's
// exports with @arethetypeswrong/cli: ESM and CJS consumers, under node10, node16 and bundler resolution, must
// each find both the code and its types.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';

// Both builds load and expose the same client, as `require` and as `import` see them.
const fromCjs = createRequire(import.meta.url)('../dist/index.js');
const fromEsm = await import('../dist/index.mjs');
for (const [format, api] of [
  ['CJS', fromCjs],
  ['ESM', fromEsm],
]) {
  const client = api.createClient({ baseUrl: 'http://127.0.0.1:9' });
  const missing = Object.keys(api.operationRoutes).filter((operationId) => typeof client[operationId] !== 'function');
  if (typeof api.unwrap !== 'function' || missing.length > 0) {
    console.error(`✘ the ${format} build lacks ${missing.join(', ') || 'unwrap'}`);
    process.exit(1);
  }
}
console.log('✔ the CJS and ESM builds load and have a method per operation');

const dir = mkdtempSync(path.join(tmpdir(), 'works-api-client-pack-'));
try {
  execFileSync('pnpm', ['pack', '--pack-destination', dir], { stdio: ['ignore', 'ignore', 'inherit'] });
  const tarball = readdirSync(dir).find((file) => file.endsWith('.tgz'));
  if (!tarball) throw new Error('pnpm pack made no tarball');
  execFileSync('attw', [path.join(dir, tarball)], { stdio: 'inherit' });
} catch (error) {
  process.exitCode = 1;
  // A child that ran and failed has said why; anything else (attw missing, say) is reported here.
  if (typeof error?.status !== 'number') console.error(error);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
