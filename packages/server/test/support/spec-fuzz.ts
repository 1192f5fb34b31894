import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import fc from 'fast-check';
import { declaredProblems } from '../../src/http/declared-problems';
import { loadSpec } from '../../src/http/spec';

/**
 * The spec-driven fuzz (spec-fuzz.test.ts, and the first run's server in first-run.test.ts): valid and invalid
 * requests for every operation of openapi/api.yaml, and what every answer must be (`verdict`).
 */
export type Json = unknown;
export type Schema = Record<string, unknown>;
export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required?: boolean;
  schema: Schema;
}
export interface Operation {
  operationId: string;
  method: string;
  path: string;
  parameters: Parameter[];
  body?: { required: boolean; schema: Schema };
  operator: boolean;
  /** Called with an API key (not the operator token, not a recipient's link token). */
  apiKey: boolean;
}

export const spec = loadSpec();
export const document = spec.document;

/** The spec's local references resolved (it has no cycles). */
export function dereference(node: Json): Json {
  if (Array.isArray(node)) return node.map(dereference);
  if (typeof node !== 'object' || node === null) return node;
  const { $ref, ...rest } = node as Record<string, unknown>;
  if (typeof $ref === 'string') {
    const target = $ref
      .slice(2)
      .split('/')
      .reduce<unknown>((at, key) => (at as Record<string, unknown>)[key], document);
    return dereference({ ...(target as object), ...rest });
  }
  return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, dereference(value)]));
}

export const operations: Operation[] = spec.operations.map((operation) => {
  const item = dereference((document.paths as Record<string, unknown>)[operation.path]) as Record<
    string,
    Record<string, unknown>
  > & {
    parameters?: Parameter[];
  };
  const definition = item[operation.method]! as {
    parameters?: Parameter[];
    requestBody?: { required?: boolean; content: Record<string, { schema: Schema }> };
  };
  return {
    operationId: operation.operationId,
    method: operation.method.toUpperCase(),
    path: operation.path,
    parameters: [...(item.parameters ?? []), ...(definition.parameters ?? [])],
    body: definition.requestBody && {
      required: definition.requestBody.required ?? false,
      schema: definition.requestBody.content['application/json']!.schema,
    },
    operator: operation.security.includes('adminToken'),
    apiKey: operation.security.includes('bearerAuth'),
  };
});

const ajv = new Ajv2020({ strict: false });
addFormats(ajv);
const validators = new Map<Schema, ValidateFunction>();
export const isValid = (schema: Schema, value: Json): boolean => {
  let validate = validators.get(schema);
  if (!validate) validators.set(schema, (validate = ajv.compile(schema)));
  return validate(value);
};

type Faker = (schema: Schema, options: { seed: number; optionalsProbability: number }) => Json;
let fake: Faker;

/** Loads json-schema-faker (ES modules only: imported, not required); call it before generating anything. */
export async function loadFaker(): Promise<void> {
  const { generateSync } = await import('json-schema-faker');
  fake = (schema, options) => generateSync(schema, options);
}

/** A value valid against `schema`: json-schema-faker's, or the schema's own example when the faker misses. */
export function validValue(schema: Schema, seed: number): Json {
  try {
    const value = fake(schema, { seed, optionalsProbability: 0.5 });
    if (isValid(schema, value)) return value;
  } catch {
    // The faker cannot do every schema (minProperties without required ones): the example is valid by lint.
  }
  return structuredClone(schema.example ?? {});
}

/** Puts `strings` into the string leaves of `value` in turn, keeping each one only if `schema` still holds. */
export function withStrings(schema: Schema, value: Json, strings: string[]): Json {
  let result = structuredClone(value);
  const leaves = (node: Json, at: Array<string | number>): Array<Array<string | number>> =>
    typeof node === 'string'
      ? [at]
      : typeof node === 'object' && node !== null
        ? Object.entries(node).flatMap(([key, child]) =>
            leaves(child, [...at, Array.isArray(node) ? Number(key) : key]),
          )
        : [];
  const paths = leaves(result, []);
  strings.forEach((text, i) => {
    const at = paths[i % Math.max(paths.length, 1)];
    if (!at || at.length === 0) return;
    const candidate = structuredClone(result) as Record<string | number, Json>;
    const parent = at
      .slice(0, -1)
      .reduce<Record<string | number, Json>>((node, key) => node[key] as Record<string | number, Json>, candidate);
    parent[at.at(-1)!] = text;
    if (isValid(schema, candidate)) result = candidate;
  });
  return result;
}

export interface FuzzRequest {
  kind: 'valid' | 'invalid';
  /** What was broken, for invalid requests. */
  broken?: string;
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
  /** The status an invalid request must get. */
  expected?: number;
  email?: string;
  idempotencyKey?: string;
}

/** Who the generated requests come from, and the ids their paths name (by path parameter). */
export interface FuzzFixtures {
  ids: Record<string, string>;
  apiKey: string;
  adminToken: string;
}

/** A path parameter: the fixture's id mostly, else one that names nothing (a UUID, or another valid string). */
const pathValue = (name: string, ids: Record<string, string>) =>
  fc.oneof(
    { arbitrary: fc.constant(ids[name]!), weight: 6 },
    { arbitrary: fc.uuid({ version: 7 }), weight: 2 },
    { arbitrary: fc.stringMatching(/^[A-Za-z0-9_-]{1,64}$/), weight: 1 },
  );

const headerValue = (name: string) =>
  name === 'Idempotency-Key'
    ? fc.stringMatching(/^[\x21-\x7E]{1,60}$/)
    : fc.oneof(fc.constant('*'), fc.constant('W/"weak"'), fc.stringMatching(/^"[A-Za-z0-9_-]{1,27}"$/));

/** A valid request for `operation`, from the caller and with the ids `fixtures` gives. */
export function validRequest(operation: Operation, fixtures: FuzzFixtures) {
  const path = operation.parameters.filter((p) => p.in === 'path');
  const query = operation.parameters.filter((p) => p.in === 'query');
  const headers = operation.parameters.filter((p) => p.in === 'header');
  return fc
    .record({
      path: fc.tuple(...path.map((p) => pathValue(p.name, fixtures.ids))),
      query: fc.tuple(
        ...query.map((p) =>
          fc.option(
            fc.integer({ min: 1, max: 2 ** 31 - 1 }).map((seed) => validValue(p.schema, seed)),
            { nil: undefined },
          ),
        ),
      ),
      headers: fc.tuple(...headers.map((p) => fc.option(headerValue(p.name), { nil: undefined }))),
      bodySeed: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
      sendBody: operation.body?.required ? fc.constant(true) : fc.boolean(),
      unicode: fc.array(fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }), { maxLength: 4 }),
    })
    .map(({ path: pathValues, query: queryValues, headers: headerValues, bodySeed, sendBody, unicode }) => {
      let url = spec.basePath + operation.path;
      path.forEach((p, i) => (url = url.replace(`{${p.name}}`, encodeURIComponent(pathValues[i]!))));
      const search = new URLSearchParams();
      query.forEach(
        (p, i) =>
          queryValues[i] !== undefined &&
          search.set(p.name, typeof queryValues[i] === 'string' ? queryValues[i] : JSON.stringify(queryValues[i])),
      );
      const sentHeaders: Record<string, string> = {
        Authorization: `Bearer ${operation.operator ? fixtures.adminToken : fixtures.apiKey}`,
      };
      headers.forEach((p, i) => headerValues[i] !== undefined && (sentHeaders[p.name] = headerValues[i]!));
      let body: Json;
      if (operation.body && sendBody) {
        body = withStrings(operation.body.schema, validValue(operation.body.schema, bodySeed), unicode);
        sentHeaders['Content-Type'] = 'application/json';
      }
      const request: FuzzRequest = {
        kind: 'valid',
        method: operation.method,
        url: search.size > 0 ? `${url}?${search.toString()}` : url,
        headers: sentHeaders,
        body: body === undefined ? undefined : JSON.stringify(body),
        email: typeof (body as { email?: unknown })?.email === 'string' ? (body as { email: string }).email : undefined,
        idempotencyKey: sentHeaders['Idempotency-Key'],
      };
      return { request, body };
    });
}

// One list per JSON Schema type the spec uses: a type without its own list would borrow one holding a valid value
// (a boolean property set to `true` was sent as "invalid" and rightly created).
const notItsType: Record<string, Json[]> = {
  string: [42, true, null, ['x'], { x: 1 }],
  object: ['x', 7, [], null],
  integer: ['1', 1.5, null, true],
  number: ['1', null, true, []],
  boolean: ['true', 1, null, []],
  array: ['x', 7, { x: 1 }, null],
};

/** The same request with one thing broken, and the status that must refuse it. */
export function invalidRequest(operation: Operation, fixtures: FuzzFixtures) {
  const schema = operation.body?.schema;
  // A property's own constraints, with those of an `allOf` it wraps (`description: allOf: [LongText]`).
  const flat = (property: Schema): Schema => Object.assign({}, ...((property.allOf ?? []) as Schema[]), property);
  const properties = Object.entries((schema?.properties ?? {}) as Record<string, Schema>).map(
    ([name, property]) => [name, flat(property)] as const,
  );
  const constrained = properties.filter(
    ([, p]) => typeof p.maxLength === 'number' || typeof p.pattern === 'string' || p.format === 'email',
  );
  const required = (schema?.required ?? []) as string[];
  const query = operation.parameters.filter((p) => p.in === 'query');
  const path = operation.parameters.filter((p) => p.in === 'path');
  const breakers: Array<fc.Arbitrary<(request: FuzzRequest, body: Json, pathValues: string[]) => void>> = [];
  const setBody = (request: FuzzRequest, body: Json) => {
    request.body = JSON.stringify(body);
    request.headers['Content-Type'] = 'application/json';
  };
  const bodyOf = (body: Json): Record<string, Json> =>
    typeof body === 'object' && body !== null ? { ...(body as Record<string, Json>) } : {};

  if (schema) {
    breakers.push(
      fc.constantFrom<Json>([], 'text', 12, null, true).map((whole) => (request: FuzzRequest) => {
        request.broken = `the body is ${JSON.stringify(whole)}`;
        setBody(request, whole);
      }),
      fc.stringMatching(/^[a-z][A-Za-z]{0,11}$/).map((name) => (request: FuzzRequest, body: Json) => {
        const key = properties.some(([known]) => known === name) ? `${name}Unknown` : name;
        request.broken = `unknown property ${key}`;
        setBody(request, { ...bodyOf(body), [key]: 'x' });
      }),
      fc.constant((request: FuzzRequest) => {
        request.broken = 'malformed JSON';
        request.body = '{"name": ';
        request.headers['Content-Type'] = 'application/json';
      }),
      fc
        .constantFrom('text/plain', 'application/xml', 'application/x-www-form-urlencoded')
        .map((type) => (request: FuzzRequest, body: Json) => {
          request.broken = `Content-Type ${type}`;
          request.body = JSON.stringify(body ?? {});
          request.headers['Content-Type'] = type;
          request.expected = 415;
        }),
    );
    if (properties.length > 0) {
      breakers.push(
        fc
          .tuple(fc.constantFrom(...properties), fc.nat())
          .map(([[name, property], pick]) => (request: FuzzRequest, body: Json) => {
            const type = typeof property.type === 'string' ? property.type : property.properties ? 'object' : 'string';
            const wrong = (notItsType[type] ?? notItsType.string!)[
              pick % (notItsType[type] ?? notItsType.string!).length
            ];
            request.broken = `${name} is ${JSON.stringify(wrong)}`;
            setBody(request, { ...bodyOf(body), [name]: wrong });
          }),
      );
    }
    if (constrained.length > 0) {
      breakers.push(
        fc
          .tuple(fc.constantFrom(...constrained), fc.nat())
          .map(([[name, property], pick]) => (request: FuzzRequest, body: Json) => {
            const candidates = [
              ...(typeof property.maxLength === 'number' ? ['é'.repeat(property.maxLength + 1)] : []),
              'a\u0000b',
              'a\u001bb',
              '\ud800',
              '',
            ].filter((value) => !isValid(property, value));
            const value = candidates[pick % candidates.length]!;
            request.broken = `${name} is ${JSON.stringify(value.slice(0, 12))}${value.length > 12 ? '…' : ''}`;
            setBody(request, { ...bodyOf(body), [name]: value });
          }),
      );
    }
    if (required.length > 0) {
      breakers.push(
        fc.constantFrom(...required).map((name) => (request: FuzzRequest, body: Json) => {
          const { [name]: _removed, ...rest } = bodyOf(body);
          request.broken = `required ${name} is missing`;
          setBody(request, rest);
        }),
      );
    }
  }
  for (const parameter of query) {
    const bad =
      parameter.schema.type === 'integer'
        ? ['0', '101', '-1', '1.5', 'ten', '']
        : parameter.schema.enum
          ? ['nope', 'TRUE', '']
          : ['', 'x'.repeat(201)];
    breakers.push(
      fc.constantFrom(...bad).map((value) => (request: FuzzRequest) => {
        request.broken = `?${parameter.name}=${value.slice(0, 12)}`;
        const url = new URL(request.url, 'http://x');
        url.searchParams.set(parameter.name, value);
        request.url = url.pathname + url.search;
      }),
    );
  }
  breakers.push(
    fc.stringMatching(/^[a-z]{1,10}$/).map((name) => (request: FuzzRequest) => {
      request.broken = `unknown query parameter ${name}`;
      const url = new URL(request.url, 'http://x');
      url.searchParams.append(`${name}_unknown`, '1');
      request.url = url.pathname + url.search;
    }),
  );
  for (const parameter of path) {
    breakers.push(
      fc
        .constantFrom('a.b', 'x'.repeat(65), '~', '..%2F..', 'a%20b', '%00')
        .map((value) => (request: FuzzRequest, _body: Json, values: string[]) => {
          request.broken = `path ${parameter.name} is ${value.slice(0, 12)}`;
          const segments = request.url.split('?');
          segments[0] = (spec.basePath + operation.path).replace(/\{([^}]+)\}/g, (_, name: string) =>
            name === parameter.name ? value : encodeURIComponent(values.shift()!),
          );
          request.url = segments.join('?');
        }),
    );
  }
  if (operation.parameters.some((p) => p.name === 'Idempotency-Key')) {
    breakers.push(
      fc.constantFrom('has space', 'x'.repeat(256), 'tab\there').map((key) => (request: FuzzRequest) => {
        request.broken = `Idempotency-Key ${JSON.stringify(key.slice(0, 12))}`;
        request.headers['Idempotency-Key'] = key;
        request.idempotencyKey = key;
      }),
    );
  }
  return fc.tuple(validRequest(operation, fixtures), fc.oneof(...breakers)).map(([{ request, body }, breakIt]) => {
    const broken: FuzzRequest = { ...request, kind: 'invalid', headers: { ...request.headers }, expected: 400 };
    const pathValues = (spec.basePath + operation.path)
      .split('/')
      .map((segment, i) =>
        /^\{.+\}$/.test(segment) ? decodeURIComponent(request.url.split('?')[0]!.split('/')[i]!) : undefined,
      )
      .filter((value): value is string => value !== undefined);
    breakIt(broken, body, pathValues);
    return broken;
  });
}

/** The problem types each operation declares, by status. */
export const declared = declaredProblems(spec);

/** A rate limit runs before validation (per API key, per recipient link): a 429 the operation declares is an answer. */
export const declaredRateLimit = (operation: Operation, status: number) =>
  status === 429 && (declared.get(operation.operationId)?.get(429) ?? []).some((type) => type.code === 'rate_limited');

/**
 * What is wrong with the answer to a generated request, if anything: a 5xx; an invalid request not refused with
 * its status; an error that is not a problem+json body with its status and a code.
 */
export function verdict(
  operation: Operation,
  request: FuzzRequest,
  status: number,
  contentType: string,
  text: string,
): string | undefined {
  const label = `${request.kind} ${request.method} ${request.url}${request.broken ? ` (${request.broken})` : ''} → ${status} ${text.slice(0, 300)}`;
  if (status >= 500) return `a 5xx: ${label}`;
  if (request.kind === 'invalid' && status !== request.expected && !declaredRateLimit(operation, status))
    return `expected ${request.expected}: ${label}`;
  if (status < 400) return undefined;
  if (!/^application\/problem\+json/.test(contentType)) return `not problem+json: ${label}`;
  const problem = JSON.parse(text) as { status?: number; code?: string };
  if (problem.status !== status || typeof problem.code !== 'string') return `not a problem: ${label}`;
  return undefined;
}
