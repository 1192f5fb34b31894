import fc from 'fast-check';
import { createRequest, createTenant, createWork } from '../support/fixtures';
import { addMember, inviteEmail } from '../support/roles';
import { ADMIN_TOKEN, startTestServer, type TestServer, type TestUser } from '../support/server';
import {
  declared,
  declaredRateLimit,
  dereference,
  document,
  type FuzzFixtures,
  type FuzzRequest,
  invalidRequest,
  isValid,
  type Json,
  loadFaker,
  type Operation,
  operations,
  type Schema,
  spec,
  validRequest,
  validValue,
  verdict,
} from '../support/spec-fuzz';

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
 * The generation and the verdict live in test/support/spec-fuzz.ts: test/process/first-run.test.ts fuzzes the
 * server of a first run (an empty database, migrated by that process) with them.
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

let server: TestServer;
let fuzzer: TestUser;
/** The fuzzer, and the ids of what it holds (a path parameter names one of them mostly). */
let fixtures: FuzzFixtures;
/** A user who exists: the walk invites them as often as an email no user has (both 202, an invitation). */
let existingEmail: string;

beforeAll(async () => {
  await loadFaker();
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
  fixtures = {
    apiKey: fuzzer.apiKey,
    adminToken: ADMIN_TOKEN,
    ids: {
      tenant_id: tenant.id,
      work_id: work.id,
      id: request.id,
      user_id: other.id,
      api_key_id: spare.data!.apiKey.id,
      invitation_id: invitation.id,
    },
  };
}, 120_000); // starting a server and its fixtures takes longer than 30 s on a loaded machine
afterAll(() => server?.close());

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
  const wrong = verdict(operation, request, res.status, res.headers.get('content-type') ?? '', text);
  if (wrong) throw new Error(wrong);
  if (res.status >= 400) {
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
        fc.asyncProperty(validRequest(operation, fixtures), ({ request }) => exercise(operation, request)),
        { seed: SEED + index * 2, numRuns: RUNS, endOnFailure: true },
      );
    });

    it('refuses invalid requests with a 4xx problem, storing nothing', async () => {
      await fc.assert(
        fc.asyncProperty(invalidRequest(operation, fixtures), (request) => exercise(operation, request)),
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
          // A next page's cursor is bound to the parent that issued it: under another parent it is not one this
          // list returned (domain/cursors.ts), whoever asks, so no tenant's existence shows through it.
          expected = query.has('after') ? 400 : 404;
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
