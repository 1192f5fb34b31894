#!/usr/bin/env node
// Checks, in a real browser, that GET /docs renders every operation of the spec the server serves.
//
//   node openapi/scripts/check-docs-in-browser.mjs http://127.0.0.1:3000 [--screenshots <dir>]
//
// Needs a running server and Debian's chromium (`apt-get install chromium`); it is a manual check, not a CI gate
// (CI machines have no browser). For each operation it opens /docs#/<tag>/<operationid> in headless Chromium,
// lets Redoc render, and looks for the operation's section (`id="<tag>/<operationid>"`) and its summary in the DOM.
// With --screenshots it also saves the overview and one picture per operation.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'yaml';

const run = promisify(execFile);
const [baseArg, ...rest] = process.argv.slice(2);
if (!baseArg) {
  console.error('usage: check-docs-in-browser.mjs <server base URL> [--screenshots <dir>]');
  process.exit(2);
}
const base = baseArg.replace(/\/+$/, '');
const shotsAt = rest.indexOf('--screenshots');
const shots = shotsAt >= 0 ? rest[shotsAt + 1] : undefined;
if (shots) mkdirSync(shots, { recursive: true });

const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

async function chromium(args) {
  const profile = mkdtempSync(path.join(tmpdir(), 'works-api-chromium-'));
  try {
    const { stdout } = await run('chromium', [...FLAGS, `--user-data-dir=${profile}`, ...args], {
      maxBuffer: 64 * 1024 * 1024,
      timeout: 60_000,
    });
    return stdout;
  } finally {
    rmSync(profile, { recursive: true, force: true });
  }
}

const slug = (text) =>
  text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
const escapeHtml = (text) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

const spec = parse(await (await fetch(`${base}/openapi.yaml`)).text());
const operations = Object.values(spec.paths).flatMap((item) =>
  ['get', 'put', 'post', 'delete', 'patch']
    .filter((method) => item[method])
    .map((method) => ({ ...item[method], method })),
);

if (shots)
  await chromium([`--screenshot=${path.join(shots, 'overview.png')}`, '--window-size=1400,16000', `${base}/docs`]);

let passed = 0;
const failures = [];
// Two browsers at a time: these machines have two cores.
for (let i = 0; i < operations.length; i += 2) {
  await Promise.all(
    operations.slice(i, i + 2).map(async (operation) => {
      const route = `${slug(operation.tags[0])}/${operation.operationId.toLowerCase()}`;
      const url = `${base}/docs#/${route}`;
      const dom = await chromium(['--virtual-time-budget=15000', '--dump-dom', url]);
      const rendered = dom.includes(`id="${route}"`) && dom.includes(escapeHtml(operation.summary));
      if (rendered) passed += 1;
      else failures.push(`${operation.operationId} (${url})`);
      if (shots)
        await chromium([
          `--screenshot=${path.join(shots, `${operation.operationId}.png`)}`,
          '--window-size=1400,2400',
          url,
        ]);
    }),
  );
}
for (const failure of failures) console.error(`✘ not rendered: ${failure}`);
console.log(`docs: ${passed} passed, ${failures.length} failed`);
process.exit(failures.length === 0 && passed === operations.length ? 0 : 1);
