#!/usr/bin/env node
// After `changeset version` bumped @works-api/openapi (openapi/package.json), writes that version into api.yaml's
// `info.version`, which the reference shows: the API's release number lives in one place, the package.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const specFile = fileURLToPath(new URL('../api.yaml', import.meta.url));
const { version } = JSON.parse(readFileSync(fileURLToPath(new URL('../package.json', import.meta.url)), 'utf8'));
const spec = readFileSync(specFile, 'utf8');
// info.version is the first `version:` indented by two spaces, inside `info:` at the top of the file.
const synced = spec.replace(/^(info:\n(?: {2}.*\n| {4,}.*\n|\n)*? {2}version: ).*$/m, `$1${version}`);
if (synced === spec && !spec.includes(`\n  version: ${version}\n`))
  throw new Error('api.yaml has no info.version to update');
writeFileSync(specFile, synced);
console.log(`api.yaml info.version: ${version}`);
