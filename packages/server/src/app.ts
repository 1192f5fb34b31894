import express, { type RequestHandler } from 'express';
import * as OpenApiValidator from 'express-openapi-validator';
import type { Db } from './db/client';
import { handlers } from './handlers';
import { requireAdminToken, requireApiKey } from './http/auth';
import { docsRoutes } from './http/docs';
import { notFoundHandler, problemHandler } from './http/problems';
import { contractRoutes, operatorPathMatcher } from './http/routes';
import { loadSpec, type Spec } from './http/spec';

export const MAX_BODY_BYTES = 64 * 1024;

export interface AppOptions {
  db: Db;
  /** Enables the operator routes (POST /v1/admin/users). */
  adminToken?: string;
  /** Check every response against the contract too (tests turn this on; a broken response becomes a 500). */
  validateResponses?: boolean;
  /** Called with every unexpected error (a bug), before the client gets a plain 500. */
  onBug?: (error: unknown) => void;
  spec?: Spec;
}

export function createApp(options: AppOptions): express.Express {
  const spec = options.spec ?? loadSpec();
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');

  const isOperatorPath = operatorPathMatcher(spec);
  const apiKeyAuth = requireApiKey(options.db);
  const adminAuth = requireAdminToken(options.adminToken);
  const authenticate: RequestHandler = (req, res, next) =>
    (isOperatorPath(req.path) ? adminAuth : apiKeyAuth)(req, res, next);

  app.use(docsRoutes()); // GET /docs and /openapi.yaml: public, outside the base path
  app.use(spec.basePath, authenticate);
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
  app.use(spec.basePath, contractRoutes(spec, handlers, options.db));
  app.use(notFoundHandler);
  app.use(problemHandler((error) => options.onBug?.(error)));
  return app;
}
