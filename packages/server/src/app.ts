import express, { type RequestHandler } from 'express';
import * as OpenApiValidator from 'express-openapi-validator';
import type { Store } from 'express-rate-limit';
import type { Db } from './db/client';
import { handlers } from './handlers';
import { accessLog } from './http/access-log';
import { requireAdminToken, requireApiKey } from './http/auth';
import { docsRoutes } from './http/docs';
import { Lifecycle } from './http/graceful-shutdown';
import { HEALTH_PATHS, healthRoutes } from './http/health';
import { type Logger, silentLogger } from './http/logger';
import { notFoundHandler, problemHandler } from './http/problems';
import { rateLimitPerApiKey } from './http/rate-limit';
import { assignRequestId } from './http/request-id';
import { contractRoutes, operatorPathMatcher } from './http/routes';
import { corsFor, securityHeaders } from './http/security';
import { loadSpec, routeTemplates, type Spec } from './http/spec';

export const MAX_BODY_BYTES = 64 * 1024;

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
  /** Browser origins allowed by CORS; none when empty or absent. */
  corsOrigins?: string[];
  /** Flipped by main.ts on SIGTERM/SIGINT: readiness fails and connections close after their response. */
  lifecycle?: Lifecycle;
  /** The readiness probe's database check; a trivial query by default. */
  ping?: () => Promise<void>;
}

/**
 * The middleware order is the design: request id, access log and shutdown tracking first, in one layer (so every
 * response, even a refusal, has an id and a log line; every Express layer costs several µs per request), security
 * headers and CORS, health probes (cheap, unauthenticated), then for `/v1`: authentication → rate limit by API
 * key → body parsing → contract validation → the operation's route.
 */
export function createApp(options: AppOptions): express.Express {
  const spec = options.spec ?? loadSpec();
  const logger = options.logger ?? silentLogger();
  const lifecycle = options.lifecycle ?? new Lifecycle();
  const db = options.db;
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');

  const logAccess = accessLog(logger, routeTemplates(spec, HEALTH_PATHS));
  app.use((req, res, next) => {
    assignRequestId(req, res);
    logAccess(req, res);
    lifecycle.track(res);
    next();
  });
  app.use(securityHeaders());
  if (options.corsOrigins?.length) app.use(corsFor(options.corsOrigins));
  app.use(healthRoutes(options.ping ?? (async () => void (await db.$queryRaw`SELECT 1`)), lifecycle));

  const isOperatorPath = operatorPathMatcher(spec);
  const apiKeyAuth = requireApiKey(db);
  const adminAuth = requireAdminToken(options.adminToken);
  const authenticate: RequestHandler = (req, res, next) =>
    (isOperatorPath(req.path) ? adminAuth : apiKeyAuth)(req, res, next);

  app.use(docsRoutes()); // GET /docs and /openapi.yaml: public, outside the base path
  app.use(spec.basePath, authenticate);
  if (options.rateLimit && options.rateLimit.perMinute > 0) {
    app.use(spec.basePath, rateLimitPerApiKey({ ...options.rateLimit, logger }));
  }
  app.use(express.json({ limit: MAX_BODY_BYTES, strict: false }));
  app.use(
    OpenApiValidator.middleware({
      apiSpec: structuredClone(spec.document) as never,
      validateRequests: { allowUnknownQueryParameters: false, coerceTypes: false },
      validateResponses: options.validateResponses ?? false,
      validateSecurity: false,
      validateFormats: true,
      $refParser: { mode: 'dereference' },
    }),
  );
  app.use(spec.basePath, contractRoutes(spec, handlers, db, logger));
  app.use(notFoundHandler);
  app.use(
    problemHandler((error, req) => {
      logger.error({ err: error, reqId: req.id, method: req.method, userId: req.actor?.userId ?? null }, 'internal error');
      options.onBug?.(error);
    }),
  );
  return app;
}
