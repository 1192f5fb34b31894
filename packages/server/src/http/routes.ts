import { type Request, type RequestHandler, type Response, Router } from 'express';
import type { Db } from '@works-api/prisma';
import { canonicalId } from '@works-api/prisma';
import type { StoredResponse } from '@works-api/prisma';
import { secretBoxOf } from '@works-api/prisma';
import { Cursors } from '../domain/cursors';
import { CursorEdge } from './cursors';
import type { Limits } from '../domain/limits';
import type { WebhookSettings } from '../webhooks/endpoints';
import type { OutageMonitor } from '@works-api/prisma';
import { entityTag, ifMatchCondition, noneMatchHit, resourceOf } from './etag';
import type { BrowserContext, HandlerContext, HandlerMap, OperationId } from '../handlers/types';
import { idempotentCreation, replayCheckFor } from './idempotency';
import type { Logger } from '../observability/logger';
import { pathPattern, type Spec, type SpecOperation, toExpressPath } from './spec';
import { textRulesFor } from './text-rules';
import type { SessionPolicy } from '../domain/sessions/sessions';
import { sessionHashOf } from '../domain/sessions/secrets';
import { clearSessionCookie, type CookieSettings, presentedSessionCookie, setSessionCookie } from './session-cookie';
import { assertTenantReach, requireTenantReach } from './auth';

/**
 * Mounts one route per operation of the contract, each answered by its handler. What an operation declares in
 * the spec switches its HTTP behaviour on: `Idempotency-Key` → replayable creations, an `ETag` response header
 * → entity tags (and `304` for `If-None-Match`), `If-Match` → a precondition handed to the domain.
 */
export interface ContractRoutesOptions {
  spec: Spec;
  handlers: HandlerMap;
  db: Db;
  logger: Logger;
  outage: OutageMonitor;
  webhooks: WebhookSettings;
  limits: Limits;
  /** Idempotency-Key settings: a count of replays (metrics) and how long a key stays in flight before a retake. */
  idempotency?: { onReplay?: () => void; lockTimeoutMs?: number };
  /** Sessions and sign-in (SIGNUP, SESSION_*). */
  sessions: SessionPolicy;
  /** The session cookie's name and attributes (session-cookie.ts). */
  cookies: CookieSettings;
}

export function contractRoutes(options: ContractRoutesOptions): Router {
  const { spec, handlers, db, logger, outage, idempotency = {} } = options;
  const router = Router({ caseSensitive: true }); // as the app's routing (app.ts)
  // Keyed from the database's keys (ENCRYPTION_KEYS, or the embedded database's key file): no setting of its own.
  const cursors = new CursorEdge(spec, new Cursors(secretBoxOf(db).derivedKeys('cursor')));
  for (const operation of spec.operations) {
    const handler = handlers[operation.operationId] as unknown as RuntimeHandler | undefined;
    if (!handler) throw new Error(`openapi/api.yaml has ${operation.operationId}, which has no handler`);
    const chain: RequestHandler[] = [];
    // Before the Idempotency-Key is taken: a refused body must not hold the key.
    const textRules = textRulesFor(spec, operation);
    if (textRules) chain.push(textRules);
    // A key limited to other tenants is a non-member here: answered as the handler answers one (after the input
    // is checked), but before an Idempotency-Key is taken (without one, respondWith checks it: one layer less).
    if (operation.inTenant && operation.takes.idempotencyKey) chain.push(requireTenantReach());
    if (operation.takes.idempotencyKey) {
      const { respond } = handler as Partial<RuntimeCreation>;
      if (!respond)
        throw new Error(`${operation.operationId} takes an Idempotency-Key: its handler must be a creation`);
      chain.push(
        idempotentCreation(db, logger, {
          etag: operation.etag,
          outage,
          beforeReplay: replayCheckFor(db, operation.operationId),
          // A retry's answer, made from the result its first request recorded, as that request's answer was.
          render: (result, req) =>
            storedResponseOf(spec.basePath, respond(result, canonicalParams(req.params)), cursors),
          ...idempotency,
        }),
      );
    }
    chain.push(respondWith({ ...options, operation, handler, cursors }));
    router[operation.method](toExpressPath(operation.path), ...chain);
  }
  return router;
}

/** A handler as the router sees it: the validator has already made the request match the handler's types. */
type RuntimeResult = { status: number; body?: unknown; location?: string };
type RuntimeHandler = (context: HandlerContext<OperationId>) => Promise<RuntimeResult>;
type RuntimeCreation = RuntimeHandler & { respond: (result: unknown, params: Record<string, string>) => RuntimeResult };

/** Every path parameter of the contract is an id (IdInPath): an upper-case UUID is the same id. */
const canonicalParams = (params: Record<string, unknown>) =>
  Object.fromEntries(
    Object.entries(params).map(([name, id]) => [name, typeof id === 'string' ? canonicalId(id) : id]),
  ) as Record<string, string>;

/** The response `result` is sent as (below), as a retry under an Idempotency-Key replays it. */
function storedResponseOf(basePath: string, result: RuntimeResult, cursors: CursorEdge): StoredResponse {
  cursors.issue(result.body, undefined);
  return {
    status: result.status,
    contentType: 'application/json; charset=utf-8',
    location: result.location ? basePath + result.location : null,
    body: JSON.stringify(result.body),
  };
}

function respondWith({
  spec: { basePath },
  operation,
  handler,
  db,
  webhooks,
  limits,
  cursors,
  sessions,
  cookies,
}: Pick<ContractRoutesOptions, 'spec' | 'db' | 'webhooks' | 'limits' | 'sessions' | 'cookies'> & {
  operation: SpecOperation;
  handler: RuntimeHandler;
  cursors: CursorEdge;
}): RequestHandler {
  const { etag, takes, operationId } = operation;
  const checkReach = operation.inTenant && !takes.idempotencyKey;
  return async (req, res) => {
    if (checkReach) assertTenantReach(req);
    const ifMatch = takes.ifMatch ? req.headers['if-match'] : undefined;
    const params = canonicalParams(req.params);
    const query = req.query as Record<string, string>;
    // A list's own list: its cursors are issued for it, and `after` is read against it (400 when not its own).
    const list = takes.after ? { operationId, path: params, query } : undefined;
    const result = await handler({
      params: params as never,
      query: list && query.after !== undefined ? { ...query, after: cursors.read(list, query.after) } : query,
      body: req.body as never,
      actor: req.actor ?? null,
      recipientToken: req.recipientToken,
      db,
      webhooks,
      limits,
      ifMatch: ifMatch === undefined ? undefined : ifMatchCondition(ifMatch),
      heldKey: req.heldKey,
      sessions,
      browser: new RequestBrowser(req, res, cookies),
    });
    if (result.location) res.location(basePath + result.location);
    if (result.body === undefined) return void res.status(result.status).end();
    if (etag.has(result.status)) {
      // The tag of the resource as the domain sees it (cursors as ids), as `If-Match` is compared in the domain;
      // the cursors are a function of it.
      const tag = entityTag(resourceOf(result.body));
      res.setHeader('ETag', tag);
      if (takes.ifNoneMatch && noneMatchHit(req.headers['if-none-match'], tag)) return void res.status(304).end();
    }
    cursors.issue(result.body, list);
    res.status(result.status).json(result.body);
  };
}

/**
 * The browser behind a request, for the handlers that sign in and out (handlers/types.ts, BrowserContext). A class,
 * not an object literal: a literal with a getter is a new hidden class on every request, and V8 kept each one, with
 * the request and response its closures held, through young-generation collections (get tenant promoted 7.7 KB a
 * request to the old generation with the literal, 0.7 KB with this; docs/benchmarks.md, "Full collections under
 * load").
 */
class RequestBrowser implements BrowserContext {
  readonly userAgent: string | null;

  constructor(
    private readonly req: Request,
    private readonly res: Response,
    private readonly cookies: CookieSettings,
  ) {
    this.userAgent = req.headers['user-agent'] ?? null;
  }

  get presentedSessionHash(): string | undefined {
    const presented = presentedSessionCookie(this.req, this.cookies);
    return presented === undefined ? undefined : sessionHashOf(presented);
  }

  setSessionCookie(value: string, maxAgeSeconds: number): void {
    setSessionCookie(this.req, this.res, this.cookies, value, maxAgeSeconds);
  }

  clearSessionCookie(): void {
    clearSessionCookie(this.req, this.res, this.cookies);
  }
}

/** True for the operations the spec authenticates with the operator token rather than an API key. */
export const operatorPathMatcher = (spec: Spec): ((path: string) => boolean) => pathMatcher(spec, 'adminToken');

/** True for the operations that need no credential (signing in: `security: []`). */
export const publicPathMatcher = (spec: Spec): ((path: string) => boolean) => {
  const patterns = spec.operations
    .filter((operation) => operation.security.length === 0)
    .map((operation) => pathPattern(operation.path));
  return (path) => patterns.some((pattern) => pattern.test(path));
};

/** True for the operations the spec authenticates with a recipient's answer token. */
export const recipientPathMatcher = (spec: Spec): ((path: string) => boolean) => pathMatcher(spec, 'recipientToken');

function pathMatcher(spec: Spec, scheme: string): (path: string) => boolean {
  const patterns = spec.operations
    .filter((operation) => operation.security.includes(scheme))
    .map((operation) => pathPattern(operation.path));
  return (path) => patterns.some((pattern) => pattern.test(path));
}
