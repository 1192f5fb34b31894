import { readFileSync } from 'node:fs';
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { parse } from 'yaml';
import { createClient, type Middleware, type WorksApiClient } from '@works-api/client';
import { closedDocument, HTTP_METHODS, specPath } from '../../../src/http/spec';

/**
 * Contract checking on the client side: every response the client receives is checked against openapi/api.yaml
 * (status documented for the operation, media type, body schema, declared headers) and recorded by operationId,
 * so the suite can tell which operations it has exercised. The server validates its success bodies too
 * (validateResponses in test/support/server.ts); this also covers problem bodies, statuses and headers.
 */

interface MediaTypeObject {
  schema?: unknown;
}
interface HeaderObject {
  required?: boolean;
  schema?: unknown;
  $ref?: string;
}
interface ResponseObject {
  $ref?: string;
  content?: Record<string, MediaTypeObject>;
  headers?: Record<string, HeaderObject>;
}
interface OperationObject {
  operationId: string;
  responses: Record<string, ResponseObject>;
}
interface SpecDocument {
  paths: Record<string, Record<string, OperationObject>>;
  components: Record<string, Record<string, unknown>>;
}

const spec = parse(readFileSync(specPath, 'utf8')) as SpecDocument;

/** Every operationId of the spec: what the suite must cover. */
export const specOperationIds: string[] = Object.values(spec.paths).flatMap((item) =>
  HTTP_METHODS.flatMap((method) => (item[method] ? [item[method].operationId] : [])),
);

const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
addFormats(ajv);
// Closed: the server must send exactly the properties the contract documents (partners' copy stays open).
ajv.addSchema(closedDocument(spec), 'api');

const pointer = (segments: string[]) =>
  `#/${segments.map((s) => encodeURIComponent(s.replace(/~/g, '~0').replace(/\//g, '~1'))).join('/')}`;
const validators = new Map<string, ValidateFunction>();
function validatorAt(segments: string[]): ValidateFunction {
  const ref = `api${pointer(segments)}`;
  let validate = validators.get(ref);
  if (!validate) {
    validate = ajv.compile({ $ref: ref });
    validators.set(ref, validate);
  }
  return validate;
}

/** A `$ref: '#/components/...'` followed to its target, with the target's location. */
function follow<T extends { $ref?: string }>(node: T, at: string[]): { node: T; at: string[] } {
  if (!node.$ref) return { node, at };
  const target = node.$ref.replace(/^#\//, '').split('/');
  const resolved = target.reduce<unknown>((value, key) => (value as Record<string, unknown>)[key], spec) as T;
  return follow(resolved, target);
}

export interface Exercised {
  operationId: string;
  method: string;
  status: number;
}

/** What the contract clients have seen: every call, by operationId and status. */
export class ContractRecorder {
  readonly calls: Exercised[] = [];

  succeeded(): Set<string> {
    return new Set(this.calls.filter((call) => call.status < 300).map((call) => call.operationId));
  }
}

/** Finds the operation of a request and checks the response against it; throws (failing the call) on a mismatch. */
function contractChecks(recorder: ContractRecorder): Middleware {
  return {
    async onResponse({ request, response, schemaPath }) {
      const method = request.method.toLowerCase();
      const operation = spec.paths[schemaPath]?.[method];
      if (!operation) throw new Error(`${request.method} ${schemaPath} is not an operation of the contract`);
      const where = `${operation.operationId} → ${response.status}`;

      const documented = operation.responses[String(response.status)] ?? operation.responses.default;
      if (!documented) throw new Error(`${where}: the status is not documented for this operation`);
      const at = ['paths', schemaPath, method, 'responses', String(response.status)];
      const { node: declared, at: declaredAt } = follow(documented, at);

      for (const [name, header] of Object.entries(declared.headers ?? {})) {
        const { node: resolved, at: headerAt } = follow(header, [...declaredAt, 'headers', name]);
        const value = response.headers.get(name);
        if (value === null) {
          if (resolved.required) throw new Error(`${where}: the required header ${name} is missing`);
          continue;
        }
        const validate = validatorAt([...headerAt, 'schema']);
        if (!validate(value)) throw new Error(`${where}: header ${name}: ${ajv.errorsText(validate.errors)}`);
      }

      const text = await response.clone().text();
      const mediaTypes = Object.keys(declared.content ?? {});
      if (mediaTypes.length === 0) {
        if (text !== '') throw new Error(`${where}: a body was sent where the contract declares none`);
      } else {
        const contentType = (response.headers.get('Content-Type') ?? '').split(';')[0]!.trim();
        if (!mediaTypes.includes(contentType)) {
          throw new Error(`${where}: Content-Type ${contentType || '(none)'} is not one of ${mediaTypes.join(', ')}`);
        }
        const validate = validatorAt([...declaredAt, 'content', contentType, 'schema']);
        let body: unknown;
        try {
          body = JSON.parse(text);
        } catch {
          throw new Error(`${where}: the body is not JSON: ${text.slice(0, 200)}`);
        }
        if (!validate(body)) throw new Error(`${where}: ${ajv.errorsText(validate.errors)} in ${text.slice(0, 500)}`);
      }
      recorder.calls.push({ operationId: operation.operationId, method, status: response.status });
      return undefined;
    },
  };
}

/** The package's own client (as partners use it), plus the contract checks and the recorder. */
export function contractClient(baseUrl: string, apiKey: string, recorder: ContractRecorder): WorksApiClient {
  const client = createClient({ baseUrl, apiKey, retry: false });
  client.use(contractChecks(recorder));
  return client;
}
