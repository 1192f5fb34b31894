import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { checkResponse, ContractRecorder } from '../contract/support/contract';
import {
  document,
  type FuzzFixtures,
  type FuzzRequest,
  type Operation,
  operations,
  type Parameter,
  type Schema,
  spec,
  verdict,
} from './spec-fuzz';

/**
 * What test/process/first-run.test.ts needs to run the service as a newcomer does: the command `pnpm start` runs,
 * an empty database, and a way to call any operation of the contract by its operationId (every answer checked
 * against the contract) and to derive, from the contract alone, every form each query parameter takes.
 */

const repoRoot = path.resolve(__dirname, '../../../..');

/**
 * The server as `pnpm start` runs it once its build is done: the Node options and the script of the last command
 * of the root package.json's `start` script, run from the repository's root.
 */
export function startCommand(): { nodeArgs: string[]; script: string; cwd: string } {
  const { scripts } = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  const words = scripts.start!.split('&&').at(-1)!.trim().split(/\s+/);
  if (words[0] !== 'node') throw new Error(`pnpm start no longer ends with a node command: ${scripts.start}`);
  return { nodeArgs: words.slice(1, -1), script: path.join(repoRoot, words.at(-1)!), cwd: repoRoot };
}

export interface EmptyDatabase {
  kind: 'pglite' | 'postgres';
  /** The environment that points a server at it. */
  env: Record<string, string>;
  remove(): Promise<void>;
}

/**
 * A database nobody has used. On PGlite (DATABASE_URL unset), a data folder that does not exist yet, as in a fresh
 * clone (the server runs initdb in it). On PostgreSQL, a database made empty for the suite on DATABASE_URL's server
 * (`<database>_first_run`, dropped first if a run left it behind), with the dev mailbox asked for, as the README's
 * step for PostgreSQL says.
 */
export async function emptyDatabase(): Promise<EmptyDatabase> {
  const url = process.env.DATABASE_URL;
  if (!url) {
    const parent = mkdtempSync(path.join(tmpdir(), 'works-api-first-run-'));
    return {
      kind: 'pglite',
      env: { PGLITE_DIR: path.join(parent, 'pglite') },
      remove: async () => rmSync(parent, { recursive: true, force: true }),
    };
  }
  const target = new URL(url);
  const name = `${target.pathname.slice(1)}_first_run`;
  target.pathname = `/${name}`;
  const admin = async (sql: string) => {
    const client = new Client({ connectionString: url });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await admin(`CREATE DATABASE "${name}"`);
  return {
    kind: 'postgres',
    env: { DATABASE_URL: target.toString(), DEV_MAILBOX: 'true' },
    remove: () => admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`),
  };
}

/** One call of an operation, as `Tour.call` takes it; what is left out is filled in from the contract. */
export interface CallInit {
  /** The secret to call with: an API key, the operator token, a recipient's link token. */
  as?: string;
  path?: Record<string, string>;
  query?: Record<string, string>;
  headers?: Record<string, string>;
  body?: unknown;
  /** The status it must answer; by default any success the operation declares. */
  expect?: number;
}

export interface Answer<Body = Record<string, unknown>> {
  status: number;
  body: Body;
  headers: Headers;
}

/** A call the tour made, to make again after a restart. */
export interface Read {
  operationId: string;
  init: CallInit;
  answer: Answer;
}

const byId = new Map(operations.map((operation) => [operation.operationId, operation]));
const query = (operation: Operation) => operation.parameters.filter((p) => p.in === 'query');
const takes = (operation: Operation, header: string) => operation.parameters.some((p) => p.name === header);

/** The successes an operation declares. */
function successes(operation: Operation): number[] {
  const paths = document.paths as Record<string, Record<string, { responses: Record<string, unknown> }>>;
  return Object.keys(paths[operation.path]![operation.method.toLowerCase()]!.responses)
    .filter((status) => status.startsWith('2'))
    .map(Number);
}

/** Query strings as a person writes them: a list of values keeps its commas (`status=pending,confirmed`). */
const querySerializer = (values: Record<string, string>) =>
  new URLSearchParams(values).toString().replace(/%2C/gi, ',');

/**
 * Calls operations of the contract by operationId on one server: the path's ids by parameter name from `ids`
 * unless given, the contract's example body unless given, the caller its security names (`secrets`). Every
 * answer goes through the contract's checks (test/contract/support/contract.ts: the status documented, the
 * headers, the body) and must be the status expected, else the call throws with the answer. An operation that
 * takes `If-Match` is sent the ETag its resource has now (read by the GET of the longest path it extends); one
 * that takes an `Idempotency-Key` is sent one, and the first success of each is sent again with the same key and
 * must be replayed as it was.
 */
export class Tour {
  readonly recorder = new ContractRecorder();
  readonly reads: Read[] = [];
  /** The operations sent an `If-Match`, and those whose `Idempotency-Key` was replayed. */
  readonly ifMatched = new Set<string>();
  readonly replayed = new Set<string>();
  /** The first keyed success of each operation that takes an `Idempotency-Key`, to replay after a restart. */
  readonly keyed: Read[] = [];
  private keys = 0;

  constructor(
    private baseUrl: string,
    readonly ids: Record<string, string>,
    /** The callers by default: `apiKey` for the operations of API keys, `adminToken` for the operator's. */
    readonly secrets: { apiKey: string; adminToken: string },
  ) {}

  /** The same server at another address (restarted). */
  moveTo(baseUrl: string): void {
    this.baseUrl = baseUrl;
  }

  async call<Body = Record<string, unknown>>(operationId: string, init: CallInit = {}): Promise<Answer<Body>> {
    const operation = byId.get(operationId);
    if (!operation) throw new Error(`${operationId} is not an operation of the contract`);
    const as = init.as ?? (operation.operator ? this.secrets.adminToken : this.secrets.apiKey);
    const pathValues = Object.fromEntries(
      operation.parameters
        .filter((p) => p.in === 'path')
        .map((p) => {
          const value = init.path?.[p.name] ?? this.ids[p.name];
          if (value === undefined) throw new Error(`${operationId}: no id for {${p.name}}`);
          return [p.name, value];
        }),
    );
    const headers = { ...init.headers };
    if (takes(operation, 'If-Match') && !headers['If-Match']) {
      headers['If-Match'] = await this.etagFor(operation, pathValues, as);
      this.ifMatched.add(operationId);
    }
    if (takes(operation, 'Idempotency-Key') && !headers['Idempotency-Key'])
      headers['Idempotency-Key'] = `first-run-${++this.keys}`;
    const body = init.body ?? (operation.body?.required ? operation.body.schema.example : undefined);
    const send = () => this.send(operation, as, pathValues, init.query ?? {}, headers, body);
    const answer = await send();
    const expected = init.expect === undefined ? successes(operation) : [init.expect];
    if (!expected.includes(answer.status))
      throw new Error(
        `${operationId} ${JSON.stringify({ ...init, as: undefined })} → ${answer.status}, expected ${expected.join(' or ')}: ${JSON.stringify(answer.body)}`,
      );
    if (headers['Idempotency-Key'] && answer.status < 300 && !this.replayed.has(operationId)) {
      this.replayed.add(operationId);
      this.keyed.push({ operationId, init: { ...init, as, path: pathValues, headers, body }, answer });
      const again = await send();
      if (again.status !== answer.status || JSON.stringify(again.body) !== JSON.stringify(answer.body))
        throw new Error(`${operationId}: the same Idempotency-Key and body answered otherwise the second time`);
    }
    if (operation.method === 'GET') this.reads.push({ operationId, init: { ...init, as }, answer });
    return answer as Answer<Body>;
  }

  private async send(
    operation: Operation,
    as: string,
    pathValues: Record<string, string>,
    queryValues: Record<string, string>,
    headers: Record<string, string>,
    body: unknown,
  ): Promise<Answer> {
    const path = operation.path.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(pathValues[name]!));
    const search = querySerializer(queryValues);
    const response = await fetch(`${this.baseUrl}${spec.basePath}${path}${search ? `?${search}` : ''}`, {
      method: operation.method,
      headers: {
        ...headers,
        Authorization: `Bearer ${as}`,
        ...(body !== undefined && { 'Content-Type': 'application/json' }),
      },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    const operationId = await checkResponse(operation.method, operation.path, response);
    const method = operation.method.toLowerCase();
    this.recorder.calls.push({ operationId, method, status: response.status, through: 'today' });
    const text = await response.text();
    return { status: response.status, body: text === '' ? {} : (JSON.parse(text) as never), headers: response.headers };
  }

  /** The ETag of what `operation` changes: the GET of the longest path it extends, as the same caller. */
  private async etagFor(operation: Operation, pathValues: Record<string, string>, as: string): Promise<string> {
    const reader = operations
      .filter((o) => o.method === 'GET' && takes(o, 'If-None-Match') && operation.path.startsWith(o.path))
      .sort((a, b) => b.path.length - a.path.length)[0];
    if (!reader) throw new Error(`${operation.operationId} takes If-Match, but no GET reads what it changes`);
    const read = await this.send(reader, as, pathValues, {}, {}, undefined);
    const etag = read.headers.get('ETag');
    if (read.status !== 200 || !etag) throw new Error(`${reader.operationId} gave no ETag (${read.status})`);
    return etag;
  }

  /** The operations of the contract that have not answered a success yet. */
  missing(): string[] {
    const succeeded = this.recorder.succeeded();
    return operations.map((o) => o.operationId).filter((operationId) => !succeeded.has(operationId));
  }
}

/** A form of a query parameter: the value sent, and what it stands for. */
export interface QueryForm {
  value: string;
  form: string;
}

/**
 * Every form a query parameter takes, from its schema: an integer's bounds; each value of an enum; for a list of
 * values (a pattern `^(a|b)(,(a|b))*$`), each value alone, all of them, two of them, all in reverse order; for a
 * date-time, `values['date-time']`; for anything else the values the suite gives for its name. `after` takes none:
 * a cursor comes from a page. Undefined when the suite has no value for the parameter: a new parameter must be
 * given its values.
 */
export function queryForms(parameter: Parameter, values: Record<string, string[]>): QueryForm[] | undefined {
  const schema = parameter.schema as Schema & { enum?: string[]; minimum?: number; maximum?: number };
  if (parameter.name === 'after') return [];
  if (schema.type === 'integer' && schema.minimum !== undefined && schema.maximum !== undefined)
    return [
      { value: String(schema.minimum), form: 'minimum' },
      { value: String(schema.maximum), form: 'maximum' },
    ];
  if (schema.enum) return schema.enum.map((value) => ({ value, form: `the value ${value}` }));
  const list = typeof schema.pattern === 'string' && /^\^\(([^()]+)\)\(,\(\1\)\)\*\$$/.exec(schema.pattern);
  if (list) {
    const items = list[1]!.split('|').map((item) => item.replace(/\\(.)/g, '$1'));
    return [
      ...items.map((value) => ({ value, form: `the value ${value}` })),
      { value: items.join(','), form: 'every value' },
      { value: items.slice(0, 2).join(','), form: 'two values' },
      { value: [...items].reverse().join(','), form: 'every value, reversed' },
    ];
  }
  const given = values[schema.format === 'date-time' ? 'date-time' : parameter.name];
  return given?.map((value, i) => ({ value, form: `value ${i + 1}` }));
}

/** The operations with query parameters, with the forms of each parameter (or the names of those with none). */
export function queryFormsByOperation(values: Record<string, string[]>) {
  return operations
    .filter((operation) => query(operation).length > 0)
    .map((operation) => ({
      operation,
      parameters: query(operation).map((parameter) => ({ parameter, forms: queryForms(parameter, values) })),
    }));
}

/**
 * Sends one request of the spec-driven fuzz (spec-fuzz.ts) to the server at `baseUrl`; throws when the answer is
 * wrong (its `verdict`) or outside the contract; returns its status.
 */
export async function sendFuzzed(baseUrl: string, operation: Operation, request: FuzzRequest): Promise<number> {
  const response = await fetch(baseUrl + request.url, {
    method: request.method,
    headers: request.headers,
    ...(request.body !== undefined && { body: request.body }),
  });
  const text = await response.clone().text();
  const wrong = verdict(operation, request, response.status, response.headers.get('content-type') ?? '', text);
  if (wrong) throw new Error(wrong);
  await checkResponse(operation.method, operation.path, response);
  return response.status;
}

type Person = (name: string) => { email: string; firstName: string; lastName: string };

/**
 * A user of the fuzz's own, made through `tour`, with one of everything its paths name (a tenant, a work, a
 * request, a member, a pending invitation, a spare key, a webhook endpoint): the tour's data stays as it was.
 */
export async function fuzzFixtures(
  tour: Tour,
  { person, webhookUrl, adminToken }: { person: Person; webhookUrl: string; adminToken: string },
): Promise<FuzzFixtures> {
  type Created = { user: { id: string }; apiKey: { secret: string } };
  const fuzzer = (await tour.call<Created>('adminCreateUser', { body: person('fuzzer') })).body;
  const member = (await tour.call<Created>('adminCreateUser', { body: person('fuzzed-member') })).body;
  const as = fuzzer.apiKey.secret;
  const created = async (operationId: string, init: CallInit) =>
    (Object.values((await tour.call(operationId, { as, ...init })).body)[0] as { id: string }).id;
  const tenant = await created('createTenant', { body: { name: 'Fuzzed' } });
  const work = await created('createWork', { path: { tenant_id: tenant }, body: { name: 'Fuzzed work' } });
  const path = { tenant_id: tenant, work_id: work };
  const invite = (name: string) => created('addMember', { path, body: { email: person(name).email, role: 'member' } });
  const joining = await invite('fuzzed-member');
  await tour.call('acceptInvitation', { as: member.apiKey.secret, path: { invitation_id: joining } });
  return {
    apiKey: as,
    adminToken,
    ids: {
      tenant_id: tenant,
      work_id: work,
      id: await created('createRequest', { path, body: { title: 'Fuzzed', recipient: person('fuzzed') } }),
      user_id: member.user.id,
      api_key_id: await created('createApiKey', { body: { name: 'spare' } }),
      invitation_id: await invite('fuzz-invited'),
      endpoint_id: await created('createWebhookEndpoint', { path, body: { url: webhookUrl } }),
    },
  };
}
