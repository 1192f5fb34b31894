#!/usr/bin/env node
// Writes src/operations.ts from openapi/api.yaml: one entry per operationId with its method, path and whether it
// creates something (a POST with a 201 response, or one that declares an Idempotency-Key header), which the
// client needs at run time to name its methods, add Idempotency-Keys and decide what it may retry; and, for every
// list operation (its 200 body is `{ <plural>: Connection }` and it takes an `after` cursor), where its page is and
// how large a page may be, which `paginate` needs. Before them, the request lifecycle's `x-allowed-actions`, the
// closed set of API-key scopes (`Scope`) and the one scope each operation needs (`x-required-scope`).
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
  const scopeRows = [];
  const scopes = spec.components.schemas.Scope?.enum ?? [];
  for (const [path, item] of Object.entries(spec.paths ?? {})) {
    for (const method of METHODS) {
      const operation = item[method];
      if (!operation) continue;
      if (!operation.operationId) throw new Error(`${method.toUpperCase()} ${path} has no operationId`);
      const parameters = [...(item.parameters ?? []), ...(operation.parameters ?? [])].map(resolve);
      const declaresKey = parameters.some((p) => p?.in === 'header' && p.name.toLowerCase() === 'idempotency-key');
      const creates = method === 'post' && ('201' in (operation.responses ?? {}) || declaresKey);
      const list = listOf(operation, parameters, resolve);
      const listed = list ? `, list: { connection: '${list.connection}', maxPageSize: ${list.maxPageSize} }` : '';
      rows.push(`  ${operation.operationId}: { method: '${method}', path: '${path}', creates: ${creates}${listed} },`);
      const scope = operation['x-required-scope'];
      if (scope !== undefined) {
        if (!scopes.includes(scope)) throw new Error(`${operation.operationId}: x-required-scope ${scope} is no Scope`);
        scopeRows.push(`  ${operation.operationId}: '${scope}',`);
      }
    }
  }
  return [
    '// Generated from openapi/api.yaml by scripts/generate-operations.mjs: do not edit. `pnpm generate` rewrites it.',
    '',
    "import type { components } from '@works-api/api-types';",
    '',
    "type Schemas = components['schemas'];",
    '',
    '/**',
    " * The request lifecycle: the actions each status allows (the contract's `x-allowed-actions` on RequestStatus);",
    ' * any other action is `409 invalid_transition`.',
    ' */',
    `export const allowedActionsByStatus = {`,
    ...allowedActionsOf(spec),
    "} as const satisfies Record<Schemas['RequestStatus'], readonly Schemas['RequestAction'][]>;",
    '',
    "/** Every scope an API key may hold (the contract's `Scope`), in the contract's order. */",
    `export const scopes = [${scopes.map((scope) => `'${scope}'`).join(', ')}] as const satisfies readonly Schemas['Scope'][];`,
    '',
    '/**',
    ' * The one scope each operation needs from an API key (its `x-required-scope`): a key without it gets `403',
    " * insufficient_scope`. The operator's and the recipient's operations take no API key and are not listed.",
    ' */',
    'export const requiredScopes = {',
    ...scopeRows,
    "} as const satisfies Record<string, Schemas['Scope']>;",
    '',
    '/**',
    ' * Every operation of the contract: its method, its path, whether it creates something, and for a list the',
    ' * property that holds its page (a Connection) and the largest `limit` it takes.',
    ' */',
    'export const operationRoutes = {',
    ...rows,
    '} as const;',
    '',
  ].join('\n');
}

/** `x-allowed-actions` of RequestStatus: every status of the enum, each with actions of RequestAction's enum. */
function allowedActionsOf(spec) {
  const { RequestStatus: status, RequestAction: action } = spec.components.schemas;
  const table = status['x-allowed-actions'] ?? {};
  const statuses = Object.keys(table);
  if (statuses.join() !== status.enum.join())
    throw new Error(`x-allowed-actions must list every RequestStatus in order (${status.enum.join(', ')})`);
  return statuses.map((name) => {
    const unknown = table[name].filter((a) => !action.enum.includes(a));
    if (unknown.length > 0) throw new Error(`x-allowed-actions.${name}: ${unknown.join(', ')} is no RequestAction`);
    return `  ${name}: [${table[name].map((a) => `'${a}'`).join(', ')}],`;
  });
}

/** A list operation: a query `after` cursor, and a 200 body with one property that is a Connection. */
function listOf(operation, parameters, resolve) {
  const query = (name) => parameters.find((p) => p?.in === 'query' && p.name === name);
  if (!query('after')) return undefined;
  const body = resolve(resolve(operation.responses?.['200'])?.content?.['application/json']?.schema);
  const properties = Object.entries(body?.properties ?? {});
  if (properties.length !== 1) return undefined;
  const [[connection, schema]] = properties;
  const page = resolve(schema);
  if (!page?.properties?.edges || !page.properties.pageInfo) return undefined;
  const maxPageSize = resolve(query('limit')?.schema)?.maximum;
  if (!Number.isInteger(maxPageSize))
    throw new Error(`${operation.operationId} takes \`after\` but no bounded \`limit\``);
  return { connection, maxPageSize };
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
