#!/usr/bin/env node
// The initial JavaScript budget: what a browser must download before the console can show anything, i.e. the
// entry chunk of index.html and every chunk it imports statically (not the lazy ones), gzipped at level 9 as a
// server would serve it. Reads the build's manifest (vite build, manifest: true); prints the figure; exits 1
// over the budget.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

// kB here are 1,000 bytes, as Vite prints them.
export const BUDGET_BYTES = 150_000;

const dist = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../dist');
const manifest = JSON.parse(readFileSync(path.join(dist, '.vite/manifest.json'), 'utf8'));
const entries = Object.entries(manifest).filter(([, chunk]) => chunk.isEntry);
if (entries.length !== 1) throw new Error(`expected one entry chunk in the manifest, found ${entries.length}`);

const initial = new Set();
const visit = (name) => {
  const chunk = manifest[name];
  if (!chunk || initial.has(chunk.file)) return;
  initial.add(chunk.file);
  for (const imported of chunk.imports ?? []) visit(imported);
};
visit(entries[0][0]);

let total = 0;
const rows = [...initial].map((file) => {
  const bytes = readFileSync(path.join(dist, file));
  const gzipped = gzipSync(bytes, { level: 9 }).length;
  total += gzipped;
  return `  ${file}: ${kB(bytes.length)} raw, ${kB(gzipped)} gzipped`;
});
const verdict = total <= BUDGET_BYTES ? 'within' : 'OVER';
console.log(
  `console: initial JavaScript ${kB(total)} gzipped, ${verdict} the ${kB(BUDGET_BYTES)} budget\n${rows.join('\n')}`,
);
if (total > BUDGET_BYTES) process.exit(1);

function kB(bytes) {
  return `${(bytes / 1000).toFixed(1)} kB`;
}
