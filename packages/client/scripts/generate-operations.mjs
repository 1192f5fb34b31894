#!/usr/bin/env node
// Writes src/operations.ts from openapi/api.yaml: one entry per operationId with its method, path and whether it
// creates something (a POST with a 201 response, or one that declares an Idempotency-Key header), which the
// client needs at run time to name its methods, add Idempotency-Keys and decide what it may retry.
// `--check` fails (exit 1) when the committed file is not what the spec produces.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

const specFile = fileURLToPath(new URL('../../../openapi/api.yaml', import.meta.url));
const outFile = fileURLToPath(new URL('../src/operations.ts', import.meta.url));
const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

export function generate(specText) {
  const spec = parse(specText);
  const resolve = (node) => {
    if (!node || typeof node.$ref !== 'string') return node;
    return node.$ref
      .replace(/^#\//, '')
      .split('/')
      .reduce((value, key) => value?.[key.replace(/~1/g, '/').replace(/~0/g, '~')], spec);
  };
  const rows = [];
  for (const [path, item] of Object.entries(spec.paths ?? {})) {
    for (const method of METHODS) {
      const operation = item[method];
      if (!operation) continue;
      if (!operation.operationId) throw new Error(`${method.toUpperCase()} ${path} has no operationId`);
      const parameters = [...(item.parameters ?? []), ...(operation.parameters ?? [])].map(resolve);
      const declaresKey = parameters.some((p) => p?.in === 'header' && p.name.toLowerCase() === 'idempotency-key');
      const creates = method === 'post' && ('201' in (operation.responses ?? {}) || declaresKey);
      rows.push(`  ${operation.operationId}: { method: '${method}', path: '${path}', creates: ${creates} },`);
    }
  }
  return [
    '// Generated from openapi/api.yaml by scripts/generate-operations.mjs: do not edit. `pnpm generate` rewrites it.',
    '',
    '/** Every operation of the contract: its method, its path and whether it creates something. */',
    'export const operationRoutes = {',
    ...rows,
    '} as const;',
    '',
  ].join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const generated = generate(readFileSync(specFile, 'utf8'));
  if (process.argv.includes('--check')) {
    let committed = '';
    try {
      committed = readFileSync(outFile, 'utf8');
    } catch {
      // missing counts as stale
    }
    if (committed !== generated) {
      console.error('✘ packages/client/src/operations.ts is not what openapi/api.yaml produces: run `pnpm generate`.');
      process.exit(1);
    }
    console.log('✔ packages/client/src/operations.ts matches openapi/api.yaml');
  } else {
    writeFileSync(outFile, generated);
    console.log(`wrote ${outFile}`);
  }
}
