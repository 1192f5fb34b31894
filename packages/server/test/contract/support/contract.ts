import { readFileSync } from 'node:fs';
import path from 'node:path';
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

/** A contract to check responses against: its document, and Ajv validators at its JSON pointers. */
class ContractDocument {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(readonly document: SpecDocument) {
    addFormats(this.ajv);
    this.ajv.addSchema(document, 'api');
  }

  validatorAt(segments: string[]): ValidateFunction {
    const ref = `api${pointer(segments)}`;
    let validate = this.validators.get(ref);
    if (!validate) {
      validate = this.ajv.compile({ $ref: ref });
      this.validators.set(ref, validate);
    }
    return validate;
  }

  errorsText(validate: ValidateFunction): string {
    return this.ajv.errorsText(validate.errors);
  }

  /** A `$ref: '#/components/...'` followed to its target, with the target's location. */
  follow<T extends { $ref?: string }>(node: T, at: string[]): { node: T; at: string[] } {
    if (!node.$ref) return { node, at };
    const target = node.$ref.replace(/^#\//, '').split('/');
    const resolved = target.reduce<unknown>(
      (value, key) => (value as Record<string, unknown>)[key],
      this.document,
    ) as T;
    return this.follow(resolved, target);
  }
}

const pointer = (segments: string[]) =>
  `#/${segments.map((s) => encodeURIComponent(s.replace(/~/g, '~0').replace(/\//g, '~1'))).join('/')}`;

// Closed: the server must send exactly the properties the contract documents (partners' copy stays open).
const today = new ContractDocument(closedDocument(spec));

/**
 * The previous release's client and contract (scripts/previous-client.mjs sets CONTRACT_PREVIOUS to a folder
 * holding its bundled client and its api.yaml): the operations that release knew go through its client, and
 * their responses are checked against its contract as it was written, strictly, as a partner who pinned it would.
 */
interface PreviousRelease {
  contract: ContractDocument;
  createClient: (options: { baseUrl: string; apiKey?: string; retry?: false }) => WorksApiClient;
  operationIds: Set<string>;
}
const previous: PreviousRelease | undefined = (() => {
  const folder = process.env.CONTRACT_PREVIOUS;
  if (!folder) return undefined;
  // The bundle the script built from the previous release's sources (CommonJS, its dependencies inside).
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- a bundle built at run time
  const module = require(path.join(folder, 'client.cjs')) as {
    createClient: PreviousRelease['createClient'];
    operationRoutes: Record<string, unknown>;
  };
  return {
    contract: new ContractDocument(parse(readFileSync(path.join(folder, 'api.yaml'), 'utf8')) as SpecDocument),
    createClient: module.createClient,
    operationIds: new Set(Object.keys(module.operationRoutes)),
  };
})();

/** The operations of the previous release, when the suite runs its client (the compatibility check). */
export const previousOperationIds: ReadonlySet<string> | undefined = previous?.operationIds;

export interface Exercised {
  operationId: string;
  method: string;
  status: number;
  /** Which client made the call: today's, or the previous release's (the compatibility check). */
  through: 'today' | 'previous';
}

/** What the contract clients have seen: every call, by operationId and status. */
export class ContractRecorder {
  readonly calls: Exercised[] = [];

  succeeded(): Set<string> {
    return new Set(this.calls.filter((call) => call.status < 300).map((call) => call.operationId));
  }
}

/** Finds the operation of a request and checks the response against it; throws (failing the call) on a mismatch. */
function contractChecks(
  contract: ContractDocument,
  recorder: ContractRecorder,
  through: Exercised['through'],
): Middleware {
  return {
    async onResponse({ request, response, schemaPath }) {
      const operationId = await checkResponse(request.method, schemaPath, response, contract, through);
      recorder.calls.push({ operationId, method: request.method.toLowerCase(), status: response.status, through });
      return undefined;
    },
  };
}

/**
 * Checks a response to `method` on `schemaPath` (the contract's path, `/tenants/{tenant_id}`) against today's
 * contract: its status documented for the operation, its declared headers, its media type and body. Throws on a
 * mismatch; returns the operationId.
 */
export async function checkResponse(
  requestMethod: string,
  schemaPath: string,
  response: Response,
  contract = today,
  through: Exercised['through'] = 'today',
): Promise<string> {
  const method = requestMethod.toLowerCase();
  const operation = contract.document.paths[schemaPath]?.[method];
  if (!operation) throw new Error(`${requestMethod} ${schemaPath} is not an operation of the contract`);
  const where = `${operation.operationId} → ${response.status}${through === 'previous' ? ' (previous release)' : ''}`;

  const documented = operation.responses[String(response.status)] ?? operation.responses.default;
  if (!documented) throw new Error(`${where}: the status is not documented for this operation`);
  const at = ['paths', schemaPath, method, 'responses', String(response.status)];
  const { node: declared, at: declaredAt } = contract.follow(documented, at);

  for (const [name, header] of Object.entries(declared.headers ?? {})) {
    const { node: resolved, at: headerAt } = contract.follow(header, [...declaredAt, 'headers', name]);
    const value = response.headers.get(name);
    if (value === null) {
      if (resolved.required) throw new Error(`${where}: the required header ${name} is missing`);
      continue;
    }
    const validate = contract.validatorAt([...headerAt, 'schema']);
    // A header is text: one whose schema is a number (Retry-After) is checked as the number it writes.
    if (!validate(value) && !(/^-?\d+(\.\d+)?$/.test(value) && validate(Number(value))))
      throw new Error(`${where}: header ${name}: ${contract.errorsText(validate)}`);
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
    const validate = contract.validatorAt([...declaredAt, 'content', contentType, 'schema']);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new Error(`${where}: the body is not JSON: ${text.slice(0, 200)}`);
    }
    if (!validate(body)) throw new Error(`${where}: ${contract.errorsText(validate)} in ${text.slice(0, 500)}`);
  }
  return operation.operationId;
}

/**
 * The package's own client (as partners use it), plus the contract checks and the recorder. In the compatibility
 * check (CONTRACT_PREVIOUS), every operation the previous release had goes through that release's client and is
 * checked against that release's contract; the operations added since go through today's.
 */
export function contractClient(
  baseUrl: string,
  apiKey: string | undefined,
  recorder: ContractRecorder,
  /** Headers of every call (a session cookie: `{ cookie, 'sec-fetch-site': 'same-origin' }`, as a browser sends). */
  headers?: Record<string, string>,
): WorksApiClient {
  const client = createClient({ baseUrl, apiKey, retry: false, ...(headers && { headers }) });
  client.use(contractChecks(today, recorder, 'today'));
  if (!previous) return client;
  const older = previous.createClient({ baseUrl, apiKey, retry: false, ...(headers && { headers }) });
  older.use(contractChecks(previous.contract, recorder, 'previous'));
  return new Proxy(client, {
    get: (target, key, receiver) =>
      typeof key === 'string' && previous.operationIds.has(key)
        ? (older as unknown as Record<string, unknown>)[key]
        : Reflect.get(target, key, receiver),
  });
}
