import { isUtf8 } from 'node:buffer';
import express, { type RequestHandler, Router } from 'express';
import type { Store } from 'express-rate-limit';
import type { Db } from '@works-api/prisma';
import type { WebhookSettings } from './webhooks/endpoints';
import { systemLookup } from './webhooks/resolver';
import { OutageMonitor, pingDatabase } from '@works-api/prisma';
import { ProblemError } from './domain/errors';
import { DEFAULT_LIMITS, type Limits } from './domain/limits';
import { handlers } from './handlers';
import { accessLog } from './http/access-log';
import { requireAdminToken, requireCaller, requireOwnPages, requireRecipientToken } from './http/auth';
import { DEFAULT_SESSION_SETTINGS, type SessionSettings } from './config';
import type { CookieSettings } from './http/session-cookie';
import { signInRateLimit } from './http/sign-in-rate-limit';
import { consoleRoutes } from './http/console';
import { declaredProblemCheck } from './http/declared-problems';
import { docsRoutes } from './http/docs';
import { Lifecycle } from './http/graceful-shutdown';
import { HEALTH_PATHS, healthRoutes } from './http/health';
import { type Logger, silentLogger } from './observability/logger';
import { repeatedSingletonHeader } from './http/duplicate-headers';
import {
  MAX_BATCH_BODY_BYTES,
  MAX_BODY_BYTES,
  notFoundHandler,
  problemHandler,
  type ProblemLocals,
  sendProblem,
} from './http/problems';
import { countingFailures, FailedAuthentications, forwardedForWarning, rateLimitPerUser } from './http/rate-limit';
import { recipientPageRoutes } from './http/recipient-page';
import { stopPageRoutes } from './http/stop-page';
import {
  RECIPIENT_RATE_LIMITS,
  type RecipientRateLimitOptions,
  recipientRateLimits,
} from './http/recipient-rate-limit';
import { devMailboxRoutes } from './http/dev-mailbox';
import type { DevMailbox } from './mail/transport';
import { assignRequestId } from './http/request-id';
import { contractValidator } from './http/contract-validator';
import { ruleMessages } from './domain/validation-messages';
import { batchFindingsWithValidators, validationMessages } from './http/validation-errors';
import { contractRoutes, operatorPathMatcher, publicPathMatcher, recipientPathMatcher } from './http/routes';
import { corsFor, securityHeaders } from './http/security';
import { operationIdentifier } from './http/operation';
import { contractSpec, routeTemplates, type Spec } from './http/spec';
import { METRICS_PATH, metricsRoute } from './http/metrics-route';
import { requestLabeler } from './observability/http';
import type { Telemetry } from './observability/telemetry';

/**
 * JSON must be UTF-8 (RFC 8259): another declared charset (UTF-16, which the parser would decode) is 415, and
 * invalid bytes, such as an encoded lone surrogate, are 400 rather than turned into U+FFFD and stored. `isUtf8`
 * is a single validating pass (simdutf).
 */
const refuseInvalidUtf8 = (_req: unknown, _res: unknown, body: Buffer, encoding: string): void => {
  if (encoding.toLowerCase() !== 'utf-8')
    throw new ProblemError('unsupported_media_type', 'Send the body as UTF-8 application/json.');
  if (!isUtf8(body)) throw new ProblemError('malformed_json', 'The body is not valid UTF-8.');
};

export interface AppOptions {
  db: Db;
  /** Enables the operator routes (POST /v1/admin/users). */
  adminToken?: string;
  /** Check every response against the contract too (tests turn this on; a broken response becomes a 500). */
  validateResponses?: boolean;
  /** Called with every unexpected error (a bug), after it is logged and before the client gets a plain 500. */
  onBug?: (error: unknown) => void;
  spec?: Spec;
  /** Access lines and errors go here (JSON lines); silent when absent. */
  logger?: Logger;
  /** Requests per minute per API key, counted in `store` (Redis, shared) or in this process. Off when absent or 0. */
  rateLimit?: { perMinute: number; store?: Store };
  /**
   * Failed authentications per minute per client address (off when absent or 0): over it, failures are 429 and
   * valid keys still pass. Counted in `store` (Redis, or the cluster's primary), or in this process when it is
   * absent or failing.
   */
  unauthenticatedRateLimit?: { perMinute: number; store?: Store };
  /** Express's `trust proxy` (TRUST_PROXY): which X-Forwarded-For hops give the client's address. Off by default. */
  trustProxy?: boolean | number | string[];
  /** Browser origins allowed by CORS; none when empty or absent. */
  corsOrigins?: string[];
  /** Flipped by main.ts on SIGTERM/SIGINT: readiness fails and connections close after their response. */
  lifecycle?: Lifecycle;
  /** What one user or tenant may hold (API keys, tenants, webhook endpoints); DEFAULT_LIMITS for what is absent. */
  limits?: Partial<Limits>;
  /** How long an Idempotency-Key stays in flight before a retry may take it over (IDEMPOTENCY_LOCK_TIMEOUT_MS). */
  idempotencyLockTimeoutMs?: number;
  /** How webhook endpoint URLs are checked; private and plain-http URLs are refused by default. */
  webhooks?: Omit<WebhookSettings, 'lookup'> & { lookup?: WebhookSettings['lookup'] };
  /** The readiness probe's database check; a trivial query by default. */
  ping?: () => Promise<void>;
  /** Prometheus metrics (and GET /metrics) and traces, when configured (observability/telemetry.ts). */
  telemetry?: Pick<Telemetry, 'metrics' | 'tracing' | 'endpoint'>;
  /** Limits on the recipient's page and operations (per answer link, per client address); defaults apply. */
  recipientRateLimit?: Partial<Omit<RecipientRateLimitOptions, 'logger'>>;
  /** Without SMTP: the emails kept in memory, which GET /dev/mailbox shows (the console's dev mailbox). */
  devMailbox?: DevMailbox;
  /** Sessions and sign-in (SIGNUP, SESSION_*, SIGN_IN_*); DEFAULT_SESSION_SETTINGS for what is absent. */
  sessions?: Partial<SessionSettings>;
  /** PUBLIC_URL: its scheme says whether the session cookie is `Secure` behind an untrusted TLS proxy. */
  publicUrl?: string;
  /** Where sign-in requests per client address are counted (Redis, shared); in this process when absent. */
  signInStore?: Store;
}

/**
 * The middleware order is the design: request id, access log and shutdown tracking first, in one layer (so every
 * response, even a refusal, has an id and a log line; every Express layer costs several µs per request), security
 * headers, a repeated singleton header refused, CORS, health probes (cheap, unauthenticated), then for `/v1`:
 * authentication (its failures counted per client address) → rate limit by API key → body parsing (UTF-8 JSON
 * only) → contract validation → the operation's route. Requests Node's parser refuses (huge headers) are answered by client-errors.ts.
 */
export function createApp(options: AppOptions): express.Express {
  const spec = options.spec ?? contractSpec();
  const logger = options.logger ?? silentLogger();
  const lifecycle = options.lifecycle ?? new Lifecycle();
  const db = options.db;
  const limits: Limits = { ...DEFAULT_LIMITS, ...options.limits };
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  app.set('trust proxy', options.trustProxy ?? false);
  // One rule for every matcher (Express, the validator, the operator-route and body matchers): paths are
  // case-sensitive, so `/v1/Admin/users` is no route at all rather than an API-key call to an operator route.
  // Set before the first `app.use`, which creates the app's router with it.
  app.set('case sensitive routing', true);

  const routeOf = routeTemplates(spec, [...HEALTH_PATHS, METRICS_PATH]);
  const logAccess = accessLog(logger, routeOf);
  const { metrics, tracing, endpoint } = options.telemetry ?? {};
  const labels = requestLabeler(routeOf);
  const identifyOperation = operationIdentifier(spec);
  const warnForwardedFor = forwardedForWarning(options.trustProxy, logger);
  app.use((req, res, next) => {
    identifyOperation(req);
    assignRequestId(req, res);
    warnForwardedFor?.(req);
    logAccess(req, res);
    lifecycle.track(res);
    if (metrics) {
      const done = metrics.requestStarted();
      res.once('close', () => done(labels(req).operation, req.method, res.statusCode));
    }
    // The rest of the request runs inside its server span, so that its statements become the span's children.
    if (tracing) tracing.serveRequest(req, res, next, labels);
    else next();
  });
  app.use(securityHeaders({ noStoreUnder: spec.basePath }));
  app.use((req, res, next) => {
    const repeated = repeatedSingletonHeader(req.rawHeaders);
    if (!repeated) return next();
    sendProblem(res, 'validation_failed', `The ${repeated} header must be sent at most once.`, req.path, {
      errors: [{ path: `/headers/${repeated}`, message: `${repeated} ${ruleMessages.sentOnce}` }],
    });
  });
  if (options.corsOrigins?.length) app.use(corsFor(options.corsOrigins));
  const ping = options.ping ?? (() => pingDatabase(db));
  const outage = new OutageMonitor(ping, logger);
  metrics?.watchOutage(() => outage.down);
  app.use(healthRoutes(ping, lifecycle));
  // One budget of failed authentications per client address, for every credential: API keys (/v1, the dev
  // mailbox), the operator and metrics tokens, the recipient's missing token.
  const failures =
    options.unauthenticatedRateLimit && options.unauthenticatedRateLimit.perMinute > 0
      ? new FailedAuthentications({
          ...options.unauthenticatedRateLimit,
          logger,
          ...(metrics && { onRejected: (budget) => metrics.rateLimited(budget) }),
        })
      : undefined;
  if (endpoint) app.use(metricsRoute(endpoint.token, endpoint.scrape, logger, failures));

  if (options.validateResponses) {
    // A problem an operation does not declare (its status, its code, a required property) is a bug, like a
    // response that breaks the contract.
    const check = declaredProblemCheck(spec);
    (app.locals as ProblemLocals).checkProblem = (req, body) => {
      const wrong = check(req, body);
      if (wrong) options.onBug?.(new Error(wrong));
    };
  }
  const isOperatorPath = operatorPathMatcher(spec);
  const isRecipientPath = recipientPathMatcher(spec);
  const isPublicPath = publicPathMatcher(spec);
  const sessions: SessionSettings = { ...DEFAULT_SESSION_SETTINGS, ...options.sessions };
  const cookies: CookieSettings = {
    publicUrlIsHttps: options.publicUrl?.startsWith('https://') ?? false,
    ownOrigins: options.publicUrl && URL.canParse(options.publicUrl) ? [new URL(options.publicUrl).origin] : [],
  };
  const callerAuth = countingFailures(requireCaller(db, { cookies, sessions }), failures);
  const adminAuth = countingFailures(requireAdminToken(options.adminToken), failures);
  const recipientAuth = countingFailures(requireRecipientToken(), failures);
  const ownPages = requireOwnPages(cookies);
  const signInLimit = signInRateLimit({
    perHour: sessions.requestsPerClientPerHour,
    logger,
    ...(options.signInStore && { store: options.signInStore }),
    ...(metrics && { onRejected: () => metrics.rateLimited('sign-in') }),
  });
  const signInGuard: RequestHandler = (req, res, next) =>
    ownPages(req, res, (error?: unknown) => (error ? next(error) : signInLimit(req, res, next)));
  const authenticate: RequestHandler = (req, res, next) =>
    (isOperatorPath(req.path)
      ? adminAuth
      : isRecipientPath(req.path)
        ? recipientAuth
        : isPublicPath(req.path)
          ? signInGuard
          : callerAuth)(req, res, next);

  app.use(docsRoutes()); // GET /docs and /openapi.yaml: public, outside the base path
  app.use(consoleRoutes()); // GET /console: the web console's build, public (it asks for a key)
  const recipientLimits = recipientRateLimits({
    ...RECIPIENT_RATE_LIMITS,
    ...options.recipientRateLimit,
    logger,
    ...(metrics && { onRejected: () => metrics.rateLimited('recipient') }),
  });
  app.use(recipientPageRoutes(db, recipientLimits, limits.answerLinkTtlMs)); // GET/POST /r/:token, no account
  app.use(stopPageRoutes(db, recipientLimits)); // GET/POST /stop/:token: stop a tenant's emails, no account
  if (options.devMailbox) app.use(devMailboxRoutes(options.devMailbox, db, callerAuth));
  app.use(spec.basePath, authenticate);
  const limitedAsRecipient = Router().use(recipientLimits);
  app.use(spec.basePath, (req, res, next) => (isRecipientPath(req.path) ? limitedAsRecipient(req, res, next) : next()));
  if (options.rateLimit && options.rateLimit.perMinute > 0) {
    app.use(
      spec.basePath,
      rateLimitPerUser({
        ...options.rateLimit,
        logger,
        isOperatorPath,
        ...(metrics && { onRejected: (budget) => metrics.rateLimited(budget) }),
      }),
    );
  }
  // Only the bodies of operations that take one are read: any other body is ignored, so a GET never answers
  // 400 malformed_json or 413, which its contract does not declare.
  const parseJson = express.json({ limit: MAX_BODY_BYTES, strict: false, verify: refuseInvalidUtf8 });
  // A batch of up to 1,000 requests (createRequestBatch) may take up to 2 MiB.
  const parseBatchJson = express.json({ limit: MAX_BATCH_BODY_BYTES, strict: false, verify: refuseInvalidUtf8 });
  app.use((req, res, next) =>
    !req.operation?.takes.body
      ? next()
      : req.operation.operationId === 'createRequestBatch'
        ? parseBatchJson(req, res, next)
        : parseJson(req, res, next),
  );
  app.use(contractValidator(spec, options.validateResponses ?? false));
  app.use(validationMessages(spec)); // the validator's findings, in words that name the field
  app.use(batchFindingsWithValidators()); // and a batch's, the server's own rules on every item too
  app.use(
    spec.basePath,
    contractRoutes({
      spec,
      handlers,
      db,
      logger,
      outage,
      webhooks: {
        maxEndpointsPerTenant: limits.webhookEndpointsPerTenant,
        ...(options.webhooks ?? { allowPrivateUrls: false }),
        lookup: options.webhooks?.lookup ?? systemLookup,
      },
      limits,
      sessions,
      cookies,
      idempotency: {
        ...(metrics && { onReplay: () => metrics.idempotentReplay() }),
        ...(options.idempotencyLockTimeoutMs !== undefined && { lockTimeoutMs: options.idempotencyLockTimeoutMs }),
      },
    }),
  );
  app.use(notFoundHandler);
  app.use(
    problemHandler(
      outage,
      (error, req) => {
        logger.error(
          { err: error, reqId: req.id, method: req.method, userId: req.actor?.userId ?? null },
          'internal error',
        );
        options.onBug?.(error);
      },
      (error, req) => {
        logger.warn(
          { err: error, reqId: req.id, method: req.method, userId: req.actor?.userId ?? null },
          'database statement timeout: answered 503',
        );
      },
    ),
  );
  return app;
}
