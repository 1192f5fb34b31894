import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Request } from 'express';
import type { Scope } from '../domain/access';
import type { OperationId } from '../handlers/types';

/** openapi/api.yaml, the contract; the same path from src/ (tests) and dist/ (the built server). */
export const specPath = path.resolve(__dirname, '../../../../openapi/api.yaml');

export const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

export interface SpecOperation {
  operationId: OperationId;
  method: HttpMethod;
  /** The path as the spec writes it, e.g. `/tenants/{tenant_id}`. */
  path: string;
  /** The security schemes that may authenticate it. */
  security: string[];
  /** The one scope an API key needs for it (`x-required-scope`); undefined for operations no API key calls. */
  requiredScope?: Scope;
  /** Whether its path names a tenant (`{tenant_id}`): a key limited to other tenants sees it as not found. */
  inTenant: boolean;
  /** The HTTP behaviours the spec declares for it (they switch the matching middleware on). */
  takes: { idempotencyKey: boolean; ifMatch: boolean; ifNoneMatch: boolean; body: boolean; after: boolean };
  /** Its query parameters, with their defaults: a list's filters are all of them but `limit` and `after`. */
  query: Array<{ name: string; default?: string }>;
  /** The success statuses whose response carries an `ETag` (addMember: its 201, not its 202 invitation). */
  etag: ReadonlySet<number>;
}

export interface Spec {
  document: Record<string, unknown>;
  basePath: string;
  operations: SpecOperation[];
}

interface Ref {
  $ref?: string;
}

interface ParameterObject extends Ref {
  name?: string;
  in?: string;
  schema?: { default?: unknown } & Ref;
}

interface ResponseObject extends Ref {
  headers?: Record<string, unknown>;
}

interface OperationObject {
  operationId: OperationId;
  'x-required-scope'?: Scope;
  security?: Array<Record<string, string[]>>;
  parameters?: ParameterObject[];
  requestBody?: unknown;
  responses?: Record<string, ResponseObject>;
}

type PathItem = Partial<Record<HttpMethod, OperationObject>> & { parameters?: ParameterObject[] };

/**
 * The same document as JSON, written by the build (scripts/spec-json.mjs) into dist/. The built server reads it:
 * parsing the YAML costs ~100 ms and leaves ~20 MB more RSS for the life of the process. The path is the same from
 * dist/http (the built server) and src/http (the tests, whose every server and contract check loads the spec: the
 * YAML took them a second of CPU under Jest each time).
 */
const builtSpecJson = path.resolve(__dirname, '../../dist/api.json');

function readSpecDocument(file: string): unknown {
  const built =
    file === specPath && existsSync(builtSpecJson) && statSync(builtSpecJson).mtimeMs >= statSync(file).mtimeMs;
  if (built) return JSON.parse(readFileSync(builtSpecJson, 'utf8'));
  // The YAML parser only for the source (tests, a build without dist/api.json): the built server never loads it.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { parse } = require('yaml') as typeof import('yaml');
  return parse(readFileSync(file, 'utf8'));
}

/** What a `$ref` points at in `document`: local references only (`#/components/...`), which is all the contract uses. */
export const resolveRef = (document: unknown, ref: string): unknown =>
  ref
    .slice(2)
    .split('/')
    .reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key], document);

/**
 * The paths a contract path template matches, under `prefix` (the base path, where the path has it): a `{param}`
 * is one segment, and a trailing slash is allowed.
 */
export const pathPattern = (template: string, prefix = ''): RegExp =>
  new RegExp(`^${prefix}${template.replace(/\{[^}]+\}/g, '[^/]+')}/?$`);

/** The server's contract, read once per process (openapi/api.yaml does not change while it runs). */
export const contractSpec = (): Spec => (loadedContract ??= loadSpec());
let loadedContract: Spec | undefined;

export function loadSpec(file = specPath): Spec {
  const document = readSpecDocument(file) as {
    servers: Array<{ url: string; variables?: Record<string, { default: string }> }>;
    security: Array<Record<string, string[]>>;
    paths: Record<string, PathItem>;
  };
  const schemesOf = (security: Array<Record<string, string[]>>) => security.flatMap((entry) => Object.keys(entry));
  const resolve = <T extends Ref>(value: T): T => (value.$ref ? (resolveRef(document, value.$ref) as T) : value);
  const operations = Object.entries(document.paths).flatMap(([specPathKey, item]) =>
    HTTP_METHODS.flatMap((method) => {
      const operation = item[method];
      if (!operation) return [];
      const parameters = [...(item.parameters ?? []), ...(operation.parameters ?? [])].map(resolve);
      const headerParameters = new Set(
        parameters.filter((parameter) => parameter.in === 'header').map((parameter) => parameter.name?.toLowerCase()),
      );
      const query = parameters
        .filter((parameter) => parameter.in === 'query')
        .map((parameter) => {
          const fallback = parameter.schema && resolve(parameter.schema).default;
          // Query values arrive as strings: a default is compared as the string a client would send.
          const text =
            typeof fallback === 'string' ? fallback : fallback === undefined ? undefined : JSON.stringify(fallback);
          return { name: parameter.name!, ...(text !== undefined && { default: text }) };
        });
      const success = Object.entries(operation.responses ?? {})
        .filter(([status]) => status.startsWith('2'))
        .map(([status, response]) => ({ status: Number(status), ...resolve(response) }));
      return [
        {
          operationId: operation.operationId,
          method,
          path: specPathKey,
          security: schemesOf(operation.security ?? document.security),
          ...(operation['x-required-scope'] !== undefined && { requiredScope: operation['x-required-scope'] }),
          inTenant: specPathKey.includes('{tenant_id}'),
          takes: {
            idempotencyKey: headerParameters.has('idempotency-key'),
            ifMatch: headerParameters.has('if-match'),
            ifNoneMatch: headerParameters.has('if-none-match'),
            body: operation.requestBody !== undefined,
            after: query.some((parameter) => parameter.name === 'after'),
          },
          query,
          etag: new Set(
            success.filter((response) => response.headers?.['ETag'] !== undefined).map((response) => response.status),
          ),
        },
      ];
    }),
  );
  return { document, basePath: basePathOf(document.servers[0]!), operations };
}

/**
 * The route template of a request for logs: its operation's (found at the edge), an app-level route, one of
 * `fixedPaths` (health probes), or the contract's path that matches (for requests refused before validation:
 * 401, 429). Null for paths nothing serves, so the log never holds a caller's made-up URL.
 */
export function routeTemplates(spec: Spec, fixedPaths: readonly string[] = []): (req: Request) => string | null {
  const fixed = new Set(fixedPaths);
  const templates = [...new Set(spec.operations.map((operation) => operation.path))].map((template) => ({
    template: spec.basePath + template,
    pattern: pathPattern(template, spec.basePath),
  }));
  return (req) => {
    if (req.operation) return spec.basePath + req.operation.path;
    if (req.route && req.baseUrl === '') return String((req.route as { path: unknown }).path);
    const path = req.originalUrl.split('?')[0]!;
    if (fixed.has(path)) return path;
    return templates.find(({ pattern }) => pattern.test(path))?.template ?? null;
  };
}

/**
 * The operation a request is for, by method and path (the path as the server sees it, base path included), or
 * undefined when none matches (unknown routes, other methods, paths outside the contract).
 */
export function operationMatcher(spec: Spec): (method: string, path: string) => SpecOperation | undefined {
  const byMethod = new Map<string, Array<{ operation: SpecOperation; pattern: RegExp }>>();
  for (const operation of spec.operations) {
    const method = operation.method.toUpperCase();
    byMethod.set(method, [
      ...(byMethod.get(method) ?? []),
      { operation, pattern: pathPattern(operation.path, spec.basePath) },
    ]);
  }
  return (method, path) => byMethod.get(method.toUpperCase())?.find(({ pattern }) => pattern.test(path))?.operation;
}

/** The path of a server URL (`{origin}/v1` with its variables' defaults, or a relative `/v1`): `/v1`. */
export function basePathOf(server: { url: string; variables?: Record<string, { default: string }> }): string {
  const url = server.url.replace(/\{([^}]+)\}/g, (_, name: string) => server.variables?.[name]?.default ?? '');
  return new URL(url, 'http://x').pathname;
}

/**
 * A copy of `document` in which every object schema declares `additionalProperties: false`. The contract leaves
 * what we send open, so that a property can be added without breaking a partner's validation; our own tests hold
 * the server to exactly the properties it documents today (a response with an undocumented one fails them). An
 * `allOf` member without a `type` only narrows its siblings (a problem type fixing `code`) and stays as it is.
 */
export function closedDocument<T>(document: T): T {
  const close = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(close);
    if (typeof node !== 'object' || node === null) return;
    const schema = node as Record<string, unknown>;
    const types = Array.isArray(schema.type) ? (schema.type as unknown[]) : [schema.type];
    if (types.includes('object') && schema.properties !== undefined && schema.additionalProperties === undefined)
      schema.additionalProperties = false;
    for (const [key, value] of Object.entries(schema)) if (key !== 'example' && key !== 'examples') close(value);
  };
  const copy = structuredClone(document);
  close(copy);
  return copy;
}

/** `/tenants/{tenant_id}` → `/tenants/:tenant_id` */
export const toExpressPath = (specPathKey: string): string => specPathKey.replace(/\{([^}]+)\}/g, ':$1');
