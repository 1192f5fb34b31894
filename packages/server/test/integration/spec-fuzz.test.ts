import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import fc from 'fast-check';
import { declaredProblems } from '../../src/http/declared-problems';
import { loadSpec } from '../../src/http/spec';
import { createRequest, createTenant, createWork } from '../support/fixtures';
import { addMember, inviteEmail } from '../support/roles';
import { ADMIN_TOKEN, startTestServer, type TestServer, type TestUser } from '../support/server';

/**
 * A fuzz test driven by openapi/api.yaml: for every operation it generates valid requests (bodies and parameters
 * from the operation's schemas with json-schema-faker, seeded by fast-check, sometimes with arbitrary Unicode put
 * into their strings) and invalid ones (a valid request with one thing broken: a wrong type, a missing or unknown
 * property, a string over its limits or with a control character, a bad query or path parameter, a bad header,
 * malformed JSON, another content type). It asserts: no 5xx; every response matches the spec (the test server
 * validates responses, and checks that every status is documented for its operation); every error is
 * problem+json; every invalid request is refused with 400 (415 for the content type); and nothing is stored by a
 * request that was refused (4xx): the caller's tenants, members, works, requests, events and keys are unchanged,
 * as are the users of the email it sent and its Idempotency-Key.
 *
 * A stateful mode (the last test) walks create → read → act → list chains by following the contract's OpenAPI
 * `links` only, as a partner's fuzzer would: see `walk` below.
 *
 * Seeded and reproducible: the seed is printed; FUZZ_SEED=<seed> replays a run. FUZZ_RUNS sets the runs per
 * operation and kind (default 8: a short run for every `pnpm test`; FUZZ_RUNS=500 for a long one), FUZZ_STEPS the
 * steps of the stateful walk (default 150; more, up to four times, while an operation is still unreached).
 */
const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : Math.floor(Math.random() * 2 ** 31);
const RUNS = Number(process.env.FUZZ_RUNS ?? 8);
const STEPS = Number(process.env.FUZZ_STEPS ?? 150);
console.log(
  `spec-fuzz: seed ${SEED} (replay with FUZZ_SEED=${SEED}), ${RUNS} runs per operation and kind, ${STEPS} linked steps`,
);

type Json = unknown;
type Schema = Record<string, unknown>;
interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required?: boolean;
  schema: Schema;
}
interface Operation {
  operationId: string;
  method: string;
  path: string;
  parameters: Parameter[];
  body?: { required: boolean; schema: Schema };
  operator: boolean;
  /** Called with an API key (not the operator token, not a recipient's link token). */
  apiKey: boolean;
}

const spec = loadSpec();
const document = spec.document;

/** The spec's local references resolved (it has no cycles). */
function dereference(node: Json): Json {
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

const operations: Operation[] = spec.operations.map((operation) => {
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
const isValid = (schema: Schema, value: Json): boolean => {
  let validate = validators.get(schema);
  if (!validate) validators.set(schema, (validate = ajv.compile(schema)));
  return validate(value);
};

type Faker = (schema: Schema, options: { seed: number; optionalsProbability: number }) => Json;
let fake: Faker;

/** A value valid against `schema`: json-schema-faker's, or the schema's own example when the faker misses. */
function validValue(schema: Schema, seed: number): Json {
  try {
    const value = fake(schema, { seed, optionalsProbability: 0.5 });
    if (isValid(schema, value)) return value;
  } catch {
    // The faker cannot do every schema (minProperties without required ones): the example is valid by lint.
  }
  return structuredClone(schema.example ?? {});
}

/** Puts `strings` into the string leaves of `value` in turn, keeping each one only if `schema` still holds. */
function withStrings(schema: Schema, value: Json, strings: string[]): Json {
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

interface FuzzRequest {
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

let server: TestServer;
let fuzzer: TestUser;
let ids: Record<string, string>;
/** A user who exists: the walk invites them as often as an email no user has (both 202, an invitation). */
let existingEmail: string;

beforeAll(async () => {
  const { generateSync } = await import('json-schema-faker');
  fake = (schema, options) => generateSync(schema, options);
  server = await startTestServer();
  fuzzer = await server.createUser('fuzzer');
  const other = await server.createUser('member');
  const tenant = await createTenant(fuzzer, 'Fuzzed');
  const work = await createWork(fuzzer, tenant.id, 'Fuzzed work');
  const request = await createRequest(fuzzer, tenant.id, work.id);
  await addMember(fuzzer, tenant.id, other, 'member');
  existingEmail = other.email;
  const invitation = await inviteEmail(fuzzer, tenant.id, `fuzz-invited-${SEED}@example.com`, 'member');
  // Invitations to the fuzzer from tenants of another user: listMyInvitations links their accept and decline.
  for (let i = 0; i < 6; i++) {
    const inviting = await createTenant(other, `Inviting the fuzzer ${i}`);
    await inviteEmail(other, inviting.id, fuzzer.email, i % 2 === 0 ? 'member' : 'admin');
  }
  // A key to revoke: never the one the fuzzer calls with.
  const spare = await fuzzer.client.POST('/api-keys', { body: { name: 'spare' } });
  ids = {
    tenant_id: tenant.id,
    work_id: work.id,
    id: request.id,
    user_id: other.id,
    api_key_id: spare.data!.apiKey.id,
    invitation_id: invitation.id,
  };
}, 120_000); // starting a server and its fixtures takes longer than 30 s on a loaded machine
afterAll(() => server?.close());

/** A path parameter: the fixture's id mostly, else one that names nothing (a UUID, or another valid string). */
const pathValue = (name: string) =>
  fc.oneof(
    { arbitrary: fc.constant(ids[name]!), weight: 6 },
    { arbitrary: fc.uuid({ version: 7 }), weight: 2 },
    { arbitrary: fc.stringMatching(/^[A-Za-z0-9_-]{1,64}$/), weight: 1 },
  );

const headerValue = (name: string) =>
  name === 'Idempotency-Key'
    ? fc.stringMatching(/^[\x21-\x7E]{1,60}$/)
    : fc.oneof(fc.constant('*'), fc.constant('W/"weak"'), fc.stringMatching(/^"[A-Za-z0-9_-]{1,27}"$/));

/** A valid request for `operation`. */
function validRequest(operation: Operation) {
  const path = operation.parameters.filter((p) => p.in === 'path');
  const query = operation.parameters.filter((p) => p.in === 'query');
  const headers = operation.parameters.filter((p) => p.in === 'header');
  return fc
    .record({
      path: fc.tuple(...path.map((p) => pathValue(p.name))),
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
        Authorization: `Bearer ${operation.operator ? ADMIN_TOKEN : fuzzer.apiKey}`,
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
function invalidRequest(operation: Operation) {
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
  return fc.tuple(validRequest(operation), fc.oneof(...breakers)).map(([{ request, body }, breakIt]) => {
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

/** What a refused request must not change: the fuzzer's tenants and all in them, and its keys. */
async function fingerprint(): Promise<string> {
  const [row] = await server.database.prisma.$queryRawUnsafe<Array<{ digest: string }>>(
    `WITH mine AS (SELECT tenant_id FROM memberships WHERE user_id = $1::uuid)
     SELECT md5(coalesce(string_agg(line, E'\\n' ORDER BY line), '')) AS digest FROM (
       SELECT concat_ws('|', 't', t.id, t.name, t.slug, t.updated_at) FROM tenants t WHERE t.id IN (SELECT tenant_id FROM mine)
       UNION ALL SELECT concat_ws('|', 'm', m.id, m.tenant_id, m.user_id, m.role) FROM memberships m WHERE m.tenant_id IN (SELECT tenant_id FROM mine)
       UNION ALL SELECT concat_ws('|', 'i', i.id, i.email, i.role) FROM invitations i WHERE i.tenant_id IN (SELECT tenant_id FROM mine)
       UNION ALL SELECT concat_ws('|', 'w', w.id, w.name, w.description, w.discarded_at, w.updated_at) FROM works w WHERE w.tenant_id IN (SELECT tenant_id FROM mine)
       UNION ALL SELECT concat_ws('|', 'r', r.id, r.status, r.answer, r.cancel_reason, r.updated_at) FROM requests r JOIN works w ON w.id = r.work_id WHERE w.tenant_id IN (SELECT tenant_id FROM mine)
       UNION ALL SELECT concat_ws('|', 'e', e.id) FROM request_events e JOIN requests r ON r.id = e.request_id JOIN works w ON w.id = r.work_id WHERE w.tenant_id IN (SELECT tenant_id FROM mine)
       UNION ALL SELECT concat_ws('|', 'k', k.id, k.name, k.revoked_at) FROM api_keys k WHERE k.user_id = $1::uuid
     ) AS lines(line)`,
    fuzzer.id,
  );
  return row!.digest;
}

const usersWithEmail = async (email: string | undefined) =>
  email === undefined ? 0 : server.database.prisma.user.count({ where: { email: email.trim().toLowerCase() } });
const heldKeys = async (key: string | undefined, operator: boolean) =>
  key === undefined
    ? 0
    : server.database.prisma.idempotencyKey.count({ where: { key, scope: operator ? 'operator' : fuzzer.id } });

const declaredRateLimit = (operation: Operation, status: number) =>
  status === 429 && (declared.get(operation.operationId)?.get(429) ?? []).some((type) => type.code === 'rate_limited');

const tally = new Map<string, number>();
/** The fingerprint as the last request left it: refreshed after a request that may have changed something. */
let current: string | undefined;

async function exercise(operation: Operation, request: FuzzRequest): Promise<void> {
  const [before, emailUsers, keys] = await Promise.all([
    current ?? fingerprint(),
    usersWithEmail(request.email),
    heldKeys(request.idempotencyKey, operation.operator),
  ]);
  current = undefined;
  const res = await server.call(request.url, { method: request.method, headers: request.headers, body: request.body });
  const text = await res.text();
  const label = `${request.kind} ${request.method} ${request.url}${request.broken ? ` (${request.broken})` : ''} → ${res.status} ${text.slice(0, 300)}`;
  tally.set(`${request.kind} ${res.status}`, (tally.get(`${request.kind} ${res.status}`) ?? 0) + 1);
  if (res.status >= 500) throw new Error(`a 5xx: ${label}`);
  // A rate limit runs before validation (per API key, per recipient link): a 429 the operation declares is an answer.
  if (request.kind === 'invalid' && res.status !== request.expected && !declaredRateLimit(operation, res.status))
    throw new Error(`expected ${request.expected}: ${label}`);
  if (res.status >= 400) {
    if (!/^application\/problem\+json/.test(res.headers.get('content-type') ?? ''))
      throw new Error(`not problem+json: ${label}`);
    const problem = JSON.parse(text) as { status?: number; code?: string };
    if (problem.status !== res.status || typeof problem.code !== 'string') throw new Error(`not a problem: ${label}`);
    const [after, emailUsersAfter] = await Promise.all([fingerprint(), usersWithEmail(request.email)]);
    if (after !== before || emailUsersAfter !== emailUsers)
      throw new Error(`a refused request changed stored data: ${label}`);
    current = after;
    if (request.kind === 'invalid' && (await heldKeys(request.idempotencyKey, operation.operator)) !== keys) {
      throw new Error(`a refused request took its Idempotency-Key: ${label}`);
    }
  }
  if (server.bugs.length > 0)
    throw new Error(`the server hit a bug (a response outside the contract?): ${String(server.bugs[0])} for ${label}`);
}

describe.each(operations.map((operation, index) => [operation.operationId, operation, index] as const))(
  '%s',
  (_id, operation, index) => {
    it('answers valid requests without a 5xx, as the spec says', async () => {
      await fc.assert(
        fc.asyncProperty(validRequest(operation), ({ request }) => exercise(operation, request)),
        { seed: SEED + index * 2, numRuns: RUNS, endOnFailure: true },
      );
    });

    it('refuses invalid requests with a 4xx problem, storing nothing', async () => {
      await fc.assert(
        fc.asyncProperty(invalidRequest(operation), (request) => exercise(operation, request)),
        {
          seed: SEED + index * 2 + 1,
          numRuns: RUNS,
          endOnFailure: true,
        },
      );
    });
  },
);

/** The operation's definition in the (dereferenced) spec. */
const definitionOf = (operation: Operation) =>
  (dereference((document.paths as Record<string, unknown>)[operation.path]) as Record<string, Record<string, unknown>>)[
    operation.method.toLowerCase()
  ]! as { responses: Record<string, { links?: Record<string, Link>; content?: Record<string, { schema: Schema }> }> };
interface Link {
  operationId: string;
  parameters?: Record<string, string>;
}
const byOperationId = new Map(operations.map((operation) => [operation.operationId, operation]));
const declared = declaredProblems(spec);

/** A runtime expression of a link (`$request.path.x`, `$response.body#/pointer`) evaluated, if it names a string. */
function evaluate(expression: string, pathValues: Record<string, string>, body: Json): string | undefined;
function evaluate(expression: string, pathValues: Record<string, string>, body: Json, raw: true): Json;
function evaluate(expression: string, pathValues: Record<string, string>, body: Json, raw = false): Json {
  const fromPath = /^\$request\.path\.(.+)$/.exec(expression);
  if (fromPath) return pathValues[fromPath[1]!];
  const fromBody = /^\$response\.body#\/(.*)$/.exec(expression);
  if (!fromBody) throw new Error(`a link expression the walk does not know: ${expression}`);
  const value = fromBody[1]!
    .split('/')
    .reduce<Json>(
      (at, key) => (typeof at === 'object' && at !== null ? (at as Record<string, Json>)[key] : undefined),
      body,
    );
  return raw || typeof value === 'string' ? value : undefined;
}

/** A call the walk may make: an operation with the parameters a link gave it. */
interface Call {
  operation: Operation;
  path: Record<string, string>;
  query: Record<string, string>;
  /** How the walk got here: `start`, or `<operationId> <status> → <link>`. */
  via: string;
}

/** One mulberry32 stream for the walk, so FUZZ_SEED replays it. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The stateful walk. It starts from the operations that need no id (create a tenant or an API key, list them,
 * who am I) and from then on calls
 * only what the links of the responses it got offer, with the ids they name: create a tenant → its works,
 * members, webhook endpoints → a work's requests → a request's reads, events and actions → lists and their next
 * pages. It prefers operations it has not called yet, so a short run reaches every linked operation. A quarter
 * of its calls are broken on purpose (an unknown body property → 400, an id that names nothing → 404, a bad
 * `limit` → 400). Every answer: no 5xx, a 2xx body valid against the operation's response schema, a problem
 * whose status and code the operation declares, and nothing the server's own response validation objected to.
 */
describe('stateful: chains that follow the links', () => {
  it(`walks ${STEPS} linked steps without a 5xx or an answer outside the contract`, async () => {
    const next = random(SEED ^ 0x5eed);
    const pick = <T>(items: T[]): T => items[Math.floor(next() * items.length)]!;
    // Where a caller with only an API key can begin: its operations that take no id.
    const start = operations
      .filter((operation) => operation.apiKey && !operation.path.includes('{'))
      .map((operation): Call => ({ operation, path: {}, query: {}, via: 'start' }));
    const linked = new Set(
      operations.flatMap((operation) =>
        Object.values(definitionOf(operation).responses).flatMap((response) =>
          Object.values(response.links ?? {}).map((link) => link.operationId),
        ),
      ),
    );
    let pool: Call[] = [];
    const called = new Map<string, number>();
    const succeeded = new Set<string>();
    const outcomes = new Map<string, number>();
    const everyOperation = [...linked, ...start.map((call) => call.operation.operationId)];
    const missed = () => everyOperation.filter((operationId) => !called.has(operationId));
    // A walk may cut the chain to an operation before reaching it (delete the only webhook endpoint before its
    // deliveries were listed) and need a while to grow it again: past STEPS, it goes on while something is
    // missed, up to four times as long.
    let step = 0;
    for (; step < STEPS || (missed().length > 0 && step < 4 * STEPS); step++) {
      // Not-yet-called operations first; else an operation chosen evenly among those the pool offers (so the
      // many reads a page links do not crowd out the rest), then one of its calls.
      // Among those, creations first and deletions last, so a chain grows before it is cut.
      const rank = (call: Call) => ({ POST: 0, GET: 1, PUT: 1, PATCH: 1, DELETE: 2 })[call.operation.method] ?? 1;
      // "Not yet" = no 2xx yet, in fewer than 3 tries: a creation that failed is retried before its links are needed.
      const unseen = [...pool, ...start].filter(
        (call) => !succeeded.has(call.operation.operationId) && (called.get(call.operation.operationId) ?? 0) < 3,
      );
      const fresh = unseen.filter((call) => rank(call) === Math.min(...unseen.map(rank)));
      const offered = [...new Set(pool.map((call) => call.operation.operationId))];
      const chosen = pick(offered.length > 0 ? offered : start.map((call) => call.operation.operationId));
      const call =
        fresh.length > 0 && next() < 0.7
          ? pick(fresh)
          : pool.length === 0 || next() < 0.05
            ? pick(start)
            : pick(pool.filter((candidate) => candidate.operation.operationId === chosen));
      const { operation } = call;
      const broken = next() < 0.25;
      const pathValues = { ...call.path };
      const query = new URLSearchParams(call.query);
      let body: Json;
      if (operation.body && (operation.body.required || next() < 0.5)) {
        const schema = operation.body.schema;
        // The example mostly, so that chains grow; the faker's bodies find the edges (names the server trims).
        body = next() < 0.75 ? structuredClone(schema.example ?? {}) : validValue(schema, Math.floor(next() * 2 ** 31));
        if (typeof body === 'object' && body !== null && 'email' in body)
          // Alternately a user who exists and an email no user has: both an invitation (202, then deleteInvitation).
          (body as Record<string, Json>).email =
            (called.get(operation.operationId) ?? 0) % 2 === 0 ? existingEmail : `walk-${step}-${SEED}@example.com`;
      }
      let expected: number | undefined;
      if (broken) {
        const lastParam = operation.path.match(/\{([^}]+)\}(?!.*\{)/)?.[1];
        if (operation.body) {
          body = { ...(typeof body === 'object' && body !== null ? body : {}), unknownProperty: 1 };
          expected = 400;
        } else if (lastParam) {
          pathValues[lastParam] = '0193a1b2-7c3d-7e4f-8a9b-0c1d2e3f4a5b';
          expected = 404;
        } else {
          query.set('limit', '0');
          expected = 400;
        }
      }
      let url =
        spec.basePath +
        operation.path.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(pathValues[name]!));
      if (query.size > 0) url += `?${query.toString()}`;
      const headers: Record<string, string> = { Authorization: `Bearer ${fuzzer.apiKey}` };
      if (body !== undefined) headers['Content-Type'] = 'application/json';
      if (operation.parameters.some((p) => p.name === 'Idempotency-Key') && next() < 0.5)
        headers['Idempotency-Key'] = `walk-${SEED}-${step}`;
      const res = await server.call(url, {
        method: operation.method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      const label = `step ${step} (${call.via}${broken ? ', broken' : ''}): ${operation.method} ${url} → ${res.status} ${text.slice(0, 300)}`;
      called.set(operation.operationId, (called.get(operation.operationId) ?? 0) + 1);
      outcomes.set(
        `${broken ? 'broken' : 'linked'} ${res.status}`,
        (outcomes.get(`${broken ? 'broken' : 'linked'} ${res.status}`) ?? 0) + 1,
      );
      if (res.status >= 500) throw new Error(`a 5xx: ${label}`);
      if (expected !== undefined && res.status !== expected && !declaredRateLimit(operation, res.status))
        throw new Error(`expected ${expected}: ${label}`);
      if (server.bugs.length > 0)
        throw new Error(`the server's response validation objected: ${String(server.bugs[0])} for ${label}`);
      const json: Json = text === '' ? undefined : JSON.parse(text);
      if (res.status >= 400) {
        const codes = (declared.get(operation.operationId)?.get(res.status) ?? []).map((type) => type.code);
        const code = (json as { code?: string }).code;
        if (!codes.includes(code!))
          throw new Error(`code ${code} is not declared for ${res.status} (${codes.join(', ')}): ${label}`);
        continue;
      }
      if (!broken) succeeded.add(operation.operationId);
      const response = definitionOf(operation).responses[String(res.status)];
      if (!response) throw new Error(`status ${res.status} is not declared: ${label}`);
      const schema = response.content?.['application/json']?.schema;
      if (schema && !isValid(schema, json)) throw new Error(`the body breaks the contract: ${label}`);
      // What the links of this answer offer next; an expression that names nothing (no first item, the last
      // page's null endCursor) leaves its link out.
      for (const [name, link] of Object.entries(response.links ?? {})) {
        const target = byOperationId.get(link.operationId)!;
        const values = Object.entries(link.parameters ?? {}).map(
          ([key, expression]) => [key, evaluate(expression, pathValues, json)] as const,
        );
        if (values.some(([, value]) => value === undefined)) continue;
        // `nextPage` only when the page says there is one (a link cannot say so itself).
        const hasNext = Object.values(link.parameters ?? {})
          .filter((expression) => expression.endsWith('/pageInfo/endCursor'))
          .map((expression) => evaluate(expression.replace(/endCursor$/, 'hasNextPage'), pathValues, json, true));
        if (hasNext.some((more) => more !== true)) continue;
        const inPath = new Set(target.parameters.filter((p) => p.in === 'path').map((p) => p.name));
        const offer: Call = {
          operation: target,
          path: Object.fromEntries(values.filter(([key]) => inPath.has(key))) as Record<string, string>,
          query: Object.fromEntries(values.filter(([key]) => !inPath.has(key))) as Record<string, string>,
          via: `${operation.operationId} ${res.status} → ${name}`,
        };
        const same = (other: Call) =>
          other.operation === offer.operation &&
          JSON.stringify([other.path, other.query]) === JSON.stringify([offer.path, offer.query]);
        if (!pool.some(same)) pool.push(offer);
      }
      pool = pool.slice(-300);
    }
    console.log(
      `spec-fuzz stateful: seed ${SEED}; ${step} steps; called ${JSON.stringify(Object.fromEntries([...called].sort()))}; outcomes ${JSON.stringify(Object.fromEntries([...outcomes].sort()))}`,
    );
    expect(missed()).toEqual([]);
  }, 600_000); // bounded by FUZZ_STEPS, not by time: a loaded machine needs more than jest's default 30 s
});

afterAll(() => {
  console.log(
    `spec-fuzz: seed ${SEED}; ${operations.length} operations; outcomes ${JSON.stringify(Object.fromEntries([...tally].sort()))}`,
  );
});
