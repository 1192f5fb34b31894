import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import type { OperationId } from './handler';

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
}

export interface Spec {
  document: Record<string, unknown>;
  basePath: string;
  operations: SpecOperation[];
}

interface OperationObject {
  operationId: OperationId;
  security?: Array<Record<string, string[]>>;
}

export function loadSpec(file = specPath): Spec {
  const document = parse(readFileSync(file, 'utf8')) as {
    servers: Array<{ url: string }>;
    security: Array<Record<string, string[]>>;
    paths: Record<string, Partial<Record<HttpMethod, OperationObject>>>;
  };
  const schemesOf = (security: Array<Record<string, string[]>>) => security.flatMap((entry) => Object.keys(entry));
  const operations = Object.entries(document.paths).flatMap(([specPathKey, item]) =>
    HTTP_METHODS.flatMap((method) => {
      const operation = item[method];
      return operation
        ? [{ operationId: operation.operationId, method, path: specPathKey, security: schemesOf(operation.security ?? document.security) }]
        : [];
    }),
  );
  return { document, basePath: new URL(document.servers[0]!.url, 'http://x').pathname, operations };
}

/** `/tenants/{tenant_id}` → `/tenants/:tenant_id` */
export const toExpressPath = (specPathKey: string): string => specPathKey.replace(/\{([^}]+)\}/g, ':$1');
