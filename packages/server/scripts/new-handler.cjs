#!/usr/bin/env node
// Scaffolds the handler of an operation that is in openapi/api.yaml but has no handler yet:
//
//   pnpm --filter @works-api/server new:handler <operationId>
//
// It writes src/handlers/<tag>/<operation-id>.ts (a handler typed by its operationId that throws until it is
// written, so the tests fail rather than pass on a stub) and adds it to src/handlers/index.ts, its import among the
// others and its entry where the spec has the operation. It prints what it did; everything else (the domain
// function, the tests) is for you: docs/adding-an-operation.md.
const { existsSync, mkdirSync, readFileSync, writeFileSync } = require('node:fs');
const path = require('node:path');
const { parse } = require('yaml');

const serverDir = path.resolve(__dirname, '..');
const specFile = path.resolve(serverDir, '../../openapi/api.yaml');
const indexFile = path.join(serverDir, 'src/handlers/index.ts');
const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

const kebab = (name) => name.replace(/([a-z0-9])([A-Z])/g, '$1-$2').toLowerCase();

/** The operationIds of the spec in order, and where the handler of `operationId` goes. */
function planFor(specText, operationId) {
  const spec = parse(specText);
  // In the order the spec writes them, which handlers/index.ts follows.
  const operations = Object.values(spec.paths ?? {}).flatMap((item) =>
    Object.entries(item)
      .filter(([key]) => METHODS.includes(key))
      .map(([, operation]) => operation),
  );
  const operation = operations.find((candidate) => candidate.operationId === operationId);
  if (!operation) throw new Error(`openapi/api.yaml has no operation ${operationId}: add it to the spec first`);
  const folder = kebab(operation.tags?.[0] ?? 'misc');
  return {
    order: operations.map((candidate) => candidate.operationId),
    file: `src/handlers/${folder}/${kebab(operationId)}.ts`,
    importPath: `./${folder}/${kebab(operationId)}`,
  };
}

function handlerSource(operationId) {
  return [
    "import type { Handler } from '../../http/handler';",
    '',
    `// Scaffolded from openapi/api.yaml: call the domain function that does the work (src/domain/) and answer with one`,
    `// of the operation's success responses; the types say which. Until then it throws, and the tests fail.`,
    `export const ${operationId}: Handler<'${operationId}'> = () =>`,
    `  Promise.reject(new Error('${operationId} has no handler yet: see docs/adding-an-operation.md'));`,
    '',
  ].join('\n');
}

/** handlers/index.ts with the new handler's import (sorted by path) and map entry (in the spec's order). */
function withHandler(indexText, operationId, importPath, order) {
  const lines = indexText.split('\n');
  const importLine = `import { ${operationId} } from '${importPath}';`;
  const imports = lines.map((line, index) => ({ line, index })).filter(({ line }) => line.startsWith('import {'));
  const pathOf = (line) => /from '([^']+)'/.exec(line)?.[1] ?? '';
  const before = imports.find(({ line }) => pathOf(line) > importPath);
  lines.splice(before ? before.index : imports.at(-1).index + 1, 0, importLine);

  const open = lines.findIndex((line) => line.startsWith('export const handlers = {'));
  const close = lines.findIndex((line, index) => index > open && line.startsWith('} satisfies HandlerMap;'));
  const entries = lines.slice(open + 1, close).map((line) => line.trim().replace(/,$/, ''));
  const position = order.indexOf(operationId);
  const next = entries.findIndex((entry) => order.indexOf(entry) > position);
  lines.splice(next >= 0 ? open + 1 + next : close, 0, `  ${operationId},`);
  return lines.join('\n');
}

module.exports = { planFor, handlerSource, withHandler };

if (require.main === module) {
  const operationId = process.argv[2];
  if (!operationId) {
    console.error('usage: pnpm --filter @works-api/server new:handler <operationId>');
    process.exit(2);
  }
  const { order, file, importPath } = planFor(readFileSync(specFile, 'utf8'), operationId);
  const target = path.join(serverDir, file);
  if (existsSync(target)) {
    console.error(`${file} exists already`);
    process.exit(1);
  }
  const index = readFileSync(indexFile, 'utf8');
  if (new RegExp(`\\b${operationId}\\b`).test(index)) {
    console.error(`src/handlers/index.ts has ${operationId} already`);
    process.exit(1);
  }
  mkdirSync(path.dirname(target), { recursive: true });
  writeFileSync(target, handlerSource(operationId));
  writeFileSync(indexFile, withHandler(index, operationId, importPath, order));
  console.log(`wrote packages/server/${file}\nadded ${operationId} to packages/server/src/handlers/index.ts`);
}
