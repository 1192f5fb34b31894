import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { type components, createClient, type paths, type WorksApiClient } from '@works-api/client';
import type { Store } from 'express-rate-limit';
import { type AppOptions, createApp } from '../../src/app';
import { type Database, type DatabaseTarget, openDatabase } from '@works-api/prisma';
import { parseEncryptionKeys, PGLITE_EXTENSIONS, secretBoxOf } from '@works-api/prisma';
import type { PGlite } from '@electric-sql/pglite';
import type { Limits } from '../../src/domain/limits';
import { answerClientErrors } from '../../src/http/client-errors';
import { Lifecycle } from '../../src/http/graceful-shutdown';
import { createLogger } from '../../src/observability/logger';
import type { Telemetry } from '../../src/observability/telemetry';
import { Dispatcher, type DispatcherOptions } from '../../src/webhooks/dispatcher';
import { MailSender, type MailSenderOptions } from '../../src/mail/sender';
import type { DevMailbox } from '../../src/mail/transport';
import { documentedStatusCheck } from './documented';
import { freshEmail } from './fixtures';
import { Cursors } from '../../src/domain/cursors';
import type { PagedList } from '../../src/domain/paging';
import { CursorEdge } from '../../src/http/cursors';
import { loadSpec } from '../../src/http/spec';

export const ADMIN_TOKEN = 'test-admin-token-0123456789';

/**
 * The ENCRYPTION_KEYS of the suite on PostgreSQL (the environment's, as CI sets it, or a fixed test key), so that
 * every server and process of a run opens what another sealed. The embedded databases make their own.
 */
export const TEST_ENCRYPTION_KEYS = process.env.ENCRYPTION_KEYS ?? 'dGVzdC1vbmx5LWtleS0tLS0tLS0tLS0tLS0tLS0tLS0=';

/** The database the suite runs on: PostgreSQL when DATABASE_URL is set, else a fresh PGlite from the template. */
export function testDatabaseTarget(): DatabaseTarget {
  const url = process.env.DATABASE_URL;
  if (url) return { kind: 'postgres', url, encryptionKeys: parseEncryptionKeys(TEST_ENCRYPTION_KEYS) };
  const template = process.env.WORKS_API_PGLITE_TEMPLATE;
  if (!template) throw new Error('run the tests through jest (test/support/global-setup.ts makes the template)');
  return { kind: 'pglite', loadDataDir: new Blob([readFileSync(template)]) };
}

export interface TestUser {
  id: string;
  email: string;
  apiKey: string;
  client: WorksApiClient;
}

export interface TestServer {
  baseUrl: string;
  database: Database;
  bugs: unknown[];
  /** Every log line the app wrote, parsed (the app logs at debug level in tests). */
  logs: Array<Record<string, unknown>>;
  /** Every log line as written, to check what never appears in them. */
  rawLogs: string[];
  lifecycle: Lifecycle;
  /** The webhook dispatcher, when the options asked for one. */
  dispatcher?: Dispatcher;
  /** The mail sender, when the options asked for one. */
  mailSender?: MailSender;
  /** A new user (unique email) with an API key, through the operator route. */
  createUser(name?: string): Promise<TestUser>;
  /** fetch() relative to the server, with an API key when given; `json()` is typed by the contract (`BodyAt`). */
  call<Url extends string, Method extends string = 'GET'>(
    path: Url,
    init?: RequestInit & { method?: Method; apiKey?: string; json?: unknown },
  ): Promise<TestResponse<BodyAt<Method, Url>>>;
  /**
   * One API call as `who` (a user, a bare API key or Authorization-less `undefined`), with a JSON body when given:
   * its status, its parsed body (undefined when empty), typed by the contract (`BodyAt`), and its headers.
   */
  callAs<Method extends string, Url extends string>(
    who: TestUser | string | undefined,
    method: Method,
    path: Url,
    json?: unknown,
    headers?: Record<string, string>,
  ): Promise<CallResult<BodyAt<Method, Url>>>;
  close(): Promise<void>;
}

/** A response whose `json()` is the body the contract declares (`BodyAt`); `json<T>()` names another. */
export type TestResponse<Body = unknown> = Omit<Response, 'json'> & { json<T = Body>(): Promise<T> };

export interface CallResult<Body = unknown> {
  status: number;
  body: Body;
  headers: Headers;
}

type Problem = components['schemas']['Problem'];
/*
 * What a raw response's JSON is, read from the contract: the URL a test fetches (`/v1/tenants/${id}/works?limit=1`)
 * is matched, at compile time, against the paths of openapi/api.yaml, and the method picks the operation. A test
 * then reads the success body as declared, and the problem fields as optional (the same body may be a problem
 * when the test expects one). A URL the compiler cannot place (a `string`, or one that starts with an interpolated
 * path) gives `JsonObject`: its fields are `unknown` until the test narrows them.
 */
type Segments<S extends string> = S extends `${infer Head}/${infer Tail}` ? [Head, ...Segments<Tail>] : [S];
/** A parameter (`{id}`) takes any segment; a fixed one, itself or an interpolated `${string}` (which may be it). */
type SegmentMatches<Actual extends string, Template extends string> = Template extends `{${string}}`
  ? true
  : Template extends Actual
    ? true
    : false;
type SegmentsMatch<Actual extends string[], Template extends string[]> = Actual extends [
  infer A extends string,
  ...infer ActualRest extends string[],
]
  ? Template extends [infer T extends string, ...infer TemplateRest extends string[]]
    ? SegmentMatches<A, T> extends true
      ? SegmentsMatch<ActualRest, TemplateRest>
      : false
    : false
  : Template extends []
    ? true
    : false;
/**
 * The segments of the path under `/v1`, without the query: never unless the URL starts with `/v1/` as written (a URL
 * that starts with an interpolated `${string}`, such as `${requestPath}/events`, may be anything).
 */
type PathOf<Url extends string> =
  Segments<Url extends `${infer Path}?${string}` ? Path : Url> extends ['', 'v1', ...infer Rest extends string[]]
    ? ['', ...Rest]
    : never;
/** The contract path (`/tenants/{tenant_id}/works`) `url` is an instance of (for a union, the union); never if none. */
export type RouteOf<Url extends string> = Url extends unknown ? RouteOfOne<Url> : never;
type RouteOfOne<Url extends string> = [PathOf<Url>] extends [never]
  ? never
  : {
      [P in Extract<keyof paths, string>]: SegmentsMatch<PathOf<Url>, Segments<P>> extends true ? P : never;
    }[Extract<keyof paths, string>];

type JsonContent<R> = R extends { content: { 'application/json': infer Body } } ? Body : never;
type SuccessBody<Operation> = Operation extends { responses: infer Responses }
  ? { [S in keyof Responses]: S extends 200 | 201 | 202 ? JsonContent<Responses[S]> : never }[keyof Responses]
  : never;
type OperationAt<Route, Method extends string> = Route extends keyof paths
  ? Lowercase<Method> extends keyof paths[Route]
    ? paths[Route][Lowercase<Method>]
    : never
  : never;
/** A body whose shape the test must check before it reads deeper than one level. */
export type JsonObject = { [key: string]: unknown };
/** The JSON a test reads from `method url`: see above. */
export type BodyAt<Method extends string, Url extends string> = [RouteOf<Url>] extends [never]
  ? JsonObject
  : [SuccessBody<OperationAt<RouteOf<Url>, Method>>] extends [never]
    ? Partial<Problem>
    : OrProblem<OneOf<SuccessBody<OperationAt<RouteOf<Url>, Method>>>>;
type UnionToIntersection<U> = (U extends unknown ? (x: U) => void : never) extends (x: infer I) => void ? I : never;
type KeysOfUnion<U> = U extends unknown ? keyof U : never;
type ValueInUnion<U, K extends PropertyKey> = U extends unknown ? (K extends keyof U ? U[K] : never) : never;
/**
 * An operation with several success bodies (`{ member }` or `{ invitation }`) answers one of them: each key is
 * optional, to be checked (`body.member!`) where the test expects that answer.
 */
type OneOf<Body> = [Body] extends [UnionToIntersection<Body>]
  ? Body
  : { [K in KeysOfUnion<Body>]?: ValueInUnion<Body, K> };
/** A success body whose problem fields (those it does not have itself) are optional. */
type OrProblem<Body> = Body extends unknown ? Body & Partial<Omit<Problem, keyof Body>> : never;

/**
 * A new user (unique email, first name `name`) and their first API key, through the operator route of the server at
 * `baseUrl` (`ADMIN_TOKEN`): a spawned process's as well as a test server's. Throws unless it answers 201.
 * `send` is how the request goes (plain fetch by default); `headers` are added to it.
 */
export async function createUserAt(
  baseUrl: string,
  name = 'user',
  {
    headers = {},
    send = (path: string, init: RequestInit) => fetch(baseUrl + path, init),
  }: { headers?: Record<string, string>; send?: (path: string, init: RequestInit) => Promise<Response> } = {},
): Promise<TestUser> {
  const email = freshEmail(name);
  const res = await send('/v1/admin/users', {
    method: 'POST',
    headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json', ...headers },
    body: JSON.stringify({ email, firstName: name, lastName: 'Tester' }),
  });
  if (res.status !== 201) throw new Error(`creating a user failed: ${res.status} ${await res.text()}`);
  const body = (await res.json()) as { user: { id: string }; apiKey: { secret: string } };
  return {
    id: body.user.id,
    email,
    apiKey: body.apiKey.secret,
    // No retries in tests: a test sees exactly what the server answered (a 429 or 503 is not hidden).
    client: createClient({ baseUrl, apiKey: body.apiKey.secret, retry: false }),
  };
}

export interface TestServerOptions {
  adminToken?: string | null;
  /** Requests per minute per API key (default: a budget no test reaches, so the limiter runs as in production). */
  rateLimitPerMinute?: number;
  /** Failed authentications per minute per client address (default: a budget no test reaches). */
  rateLimitUnauthenticatedPerMinute?: number;
  trustProxy?: boolean | number | string[];
  /** Where rate-limit counters live (a Redis store); in the process by default. */
  rateLimitStore?: Store;
  /** Where the failed-authentication counts live (a Redis store); in the process by default. */
  rateLimitUnauthenticatedStore?: Store;
  corsOrigins?: string[];
  /** Caps on what one user or tenant may hold (the defaults when absent). */
  limits?: Partial<Limits>;
  /** Serve from this database (it is closed with the server unless `keepDatabase`). */
  database?: Database;
  keepDatabase?: boolean;
  /**
   * A database of this server's own, closed with it, instead of the test file's (see `fileDatabase`): for a test
   * that closes or breaks the database under the server.
   */
  ownDatabase?: boolean;
  /**
   * A webhook dispatcher on the same database: started (woken by commits, like in production) unless `manual`,
   * where the test calls `dispatcher.runOnce()` itself, typically with an injected clock.
   */
  webhooks?: Partial<Omit<DispatcherOptions, 'db' | 'logger'>> & { manual?: boolean };
  /** Metrics (GET /metrics) and traces, as main.ts wires them (observability/telemetry.ts). */
  telemetry?: Telemetry;
  /**
   * A mail sender on the same database, sending through `transport` (an SMTP sink on loopback, or a dev
   * mailbox): started unless `manual`, where the test calls `mailSender.runOnce()` with its own clock.
   */
  mail?: Partial<Omit<MailSenderOptions, 'db' | 'logger'>> &
    Pick<MailSenderOptions, 'transport'> & { manual?: boolean };
  /** Served at GET /dev/mailbox, as main.ts does without SMTP_URL. */
  devMailbox?: DevMailbox;
  recipientRateLimit?: AppOptions['recipientRateLimit'];
  /** Sessions and sign-in settings; sign-in requests per client address are not limited unless set here. */
  sessions?: AppOptions['sessions'];
  /** PUBLIC_URL (an https one makes the session cookie Secure and `__Host-` named). */
  publicUrl?: string;
}

/**
 * The email caps a test server has unless the test sets its own: none any test reaches (as the rate limits),
 * since many tests send a run of requests, or resend, to one address. mail-limits.test.ts tests the caps.
 */
const NO_EMAIL_CAPS: Partial<Limits> = {
  resendCooldownMs: 1,
  resendsPerRequest: 1000,
  emailsPerRecipientPerDay: 100_000,
  emailsPerTenantPerDay: 10_000_000,
  emailsPerAddressPerDay: 100_000,
  emailsPerSenderPerDay: 10_000_000,
};

/**
 * The embedded database the servers of one test file share (jest loads this module once per file). Opening a PGlite
 * from the template costs a second or more; the app in front of it, milliseconds. So a file's servers (one per
 * limiter or mail setting, say) share one, as they share the one PostgreSQL database when DATABASE_URL is set: tests
 * scope what they read to the tenants and users they made. Closed once the file is over and its servers are.
 */
const fileDatabase = {
  opened: undefined as Promise<Database> | undefined,
  servers: 0,
  fileOver: false,
  async use(): Promise<Database> {
    this.servers++;
    this.opened ??= openFileDatabase();
    return this.opened;
  },
  async release(): Promise<void> {
    this.servers--;
    await this.closeWhenDone();
  },
  async closeWhenDone(): Promise<void> {
    if (!this.fileOver || this.servers > 0 || !this.opened) return;
    const opened = this.opened;
    this.opened = undefined;
    await (await opened).close();
  },
};
/**
 * On PostgreSQL, DATABASE_URL. On PGlite, the jest worker's database emptied for this file (environment.ts), or
 * outside that environment a fresh one from the template.
 */
async function openFileDatabase(): Promise<Database> {
  const worker = (globalThis as unknown as Record<symbol, WorkerPglite | undefined>)[
    Symbol.for('works-api.test.pglite')
  ];
  // Not testDatabaseTarget() first: on PGlite it reads the whole template into memory, for nothing when the worker
  // has its database.
  if (process.env.DATABASE_URL || !worker) return openDatabase(testDatabaseTarget());
  return openDatabase({ kind: 'pglite', open: await worker.emptiedWorkerDatabase(PGLITE_EXTENSIONS) });
}
type WorkerPglite = { emptiedWorkerDatabase(extensions: typeof PGLITE_EXTENSIONS): Promise<PGlite> };

// Outside jest (the HA check imports this module under tsx) there is no file to end.
if (typeof afterAll === 'function')
  afterAll(async () => {
    fileDatabase.fileOver = true;
    await fileDatabase.closeWhenDone();
  });

/** The real app on a random loopback port, checking every response against the contract. */
export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const sharesFileDatabase = !options.database && !options.ownDatabase && !process.env.DATABASE_URL;
  const database =
    options.database ?? (sharesFileDatabase ? await fileDatabase.use() : await openDatabase(testDatabaseTarget()));
  const bugs: unknown[] = [];
  const rawLogs: string[] = [];
  const logs: Array<Record<string, unknown>> = [];
  const logStream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) {
        rawLogs.push(line);
        logs.push(JSON.parse(line) as Record<string, unknown>);
      }
      done();
    },
  });
  const lifecycle = new Lifecycle();
  const app = createApp({
    db: database,
    adminToken: options.adminToken === null ? undefined : (options.adminToken ?? ADMIN_TOKEN),
    validateResponses: true,
    onBug: (error) => bugs.push(error),
    logger: createLogger('debug', logStream),
    rateLimit: { perMinute: options.rateLimitPerMinute ?? 1_000_000, store: options.rateLimitStore },
    unauthenticatedRateLimit: {
      perMinute: options.rateLimitUnauthenticatedPerMinute ?? 1_000_000,
      store: options.rateLimitUnauthenticatedStore,
    },
    ...(options.trustProxy !== undefined && { trustProxy: options.trustProxy }),
    corsOrigins: options.corsOrigins,
    limits: { ...NO_EMAIL_CAPS, ...options.limits },
    lifecycle,
    ping: () => database.ping(),
    // Tests talk to receivers on 127.0.0.1, as WEBHOOK_ALLOW_PRIVATE_URLS=true allows.
    webhooks: {
      allowPrivateUrls: options.webhooks?.allowPrivateUrls ?? true,
      ...(options.webhooks?.lookup && { lookup: options.webhooks.lookup }),
    },
    ...(options.telemetry && { telemetry: options.telemetry }),
    ...(options.devMailbox && { devMailbox: options.devMailbox }),
    ...(options.recipientRateLimit && { recipientRateLimit: options.recipientRateLimit }),
    sessions: { requestsPerClientPerHour: 1_000_000, ...options.sessions },
    ...(options.publicUrl !== undefined && { publicUrl: options.publicUrl }),
  });
  options.telemetry?.watchDatabase(database, createLogger('debug', logStream));
  const dispatcher = options.webhooks
    ? new Dispatcher({
        allowPrivateUrls: true,
        ...(options.telemetry?.metrics && { metrics: options.telemetry.metrics }),
        ...(options.telemetry?.tracing && { tracing: options.telemetry.tracing }),
        ...options.webhooks,
        db: database,
        logger: createLogger('debug', logStream),
      })
    : undefined;
  if (dispatcher && !options.webhooks?.manual) dispatcher.start();
  const mailSender = options.mail
    ? new MailSender({
        from: 'works-api <no-reply@works.test>',
        publicUrl: 'http://works.test',
        reminderBeforeMs: 24 * 60 * 60 * 1000,
        pollIntervalMs: 100,
        ...options.mail,
        db: database,
        logger: createLogger('debug', logStream),
      })
    : undefined;
  if (mailSender && !options.mail?.manual) mailSender.start();
  const server = app.listen(0, '127.0.0.1');
  answerClientErrors(server);
  // The embedded database runs in this process and can hold the event loop for a second or more; then the
  // server's 5 s keep-alive timeout and fetch's reuse of that idle connection can cross (ECONNRESET). Tests are
  // not about idle connections: keep them open longer.
  server.keepAliveTimeout = 30_000;
  await new Promise((resolve) => server.once('listening', resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const checkDocumented = documentedStatusCheck();
  const call: TestServer['call'] = async (path, init = {}) => {
    const { apiKey, json, ...rest } = init;
    const headers = new Headers(rest.headers);
    if (apiKey) headers.set('Authorization', `Bearer ${apiKey}`);
    if (json !== undefined) headers.set('Content-Type', 'application/json');
    const res = await fetch(baseUrl + path, {
      ...rest,
      headers,
      body: json === undefined ? rest.body : JSON.stringify(json),
    });
    checkDocumented(rest.method ?? 'GET', path, res.status);
    return res as TestResponse<never>;
  };
  const callAs: TestServer['callAs'] = async (who, method, path, json, headers = {}) => {
    const apiKey = typeof who === 'string' ? who : who?.apiKey;
    const res = await call(path, { method, apiKey, json, headers });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
  };

  return {
    baseUrl,
    database,
    bugs,
    logs,
    rawLogs,
    lifecycle,
    dispatcher,
    ...(mailSender && { mailSender }),
    call,
    callAs,
    createUser: (name = 'user') => createUserAt(baseUrl, name, { send: call }),
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await dispatcher?.stop(10_000);
      await mailSender?.stop(10_000);
      if (sharesFileDatabase) await fileDatabase.release();
      else if (!options.keepDatabase) await database.close();
      // A response that broke the contract, or any other bug, fails the file that caused it.
      if (bugs.length > 0) throw new Error(`the server hit ${bugs.length} bug(s): ${String(bugs[0])}`);
    },
  };
}

/**
 * The cursor a page of `list` on `server` hands out for the item `id`: to start deep in a list without walking to
 * it (the cursors are signed with the server's database keys: http/cursors.ts).
 */
export function cursorAt(server: TestServer, list: PagedList, id: string): string {
  const cursors = new Cursors(secretBoxOf(server.database).derivedKeys('cursor'));
  return new CursorEdge(loadSpec(), cursors).cursorOf(list, id);
}
