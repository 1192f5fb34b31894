import { Router, type RequestHandler } from 'express';
import type { Db } from '../db/client';
import type { HandlerContext, HandlerMap, OperationId } from './handler';
import { type Spec, toExpressPath } from './spec';

/** Mounts one route per operation of the contract, each answered by its handler. */
export function contractRoutes(spec: Spec, handlers: HandlerMap, db: Db): Router {
  const router = Router();
  for (const operation of spec.operations) {
    const handler = handlers[operation.operationId] as unknown as RuntimeHandler | undefined;
    if (!handler) throw new Error(`openapi/api.yaml has ${operation.operationId}, which has no handler`);
    router[operation.method](toExpressPath(operation.path), respondWith(handler, db));
  }
  return router;
}

/** A handler as the router sees it: the validator has already made the request match the handler's types. */
type RuntimeHandler = (context: HandlerContext<OperationId>) => Promise<{ status: number; body?: unknown; location?: string }>;

function respondWith(handler: RuntimeHandler, db: Db): RequestHandler {
  return async (req, res) => {
    const result = await handler({
      params: req.params as never,
      query: req.query as never,
      body: req.body as never,
      actor: (req.actor ?? null) as never,
      db,
    });
    if (result.location) res.location(result.location);
    if (result.body === undefined) res.status(result.status).end();
    else res.status(result.status).json(result.body);
  };
}

/** True for the operations the spec authenticates with the operator token rather than an API key. */
export function operatorPathMatcher(spec: Spec): (path: string) => boolean {
  const patterns = spec.operations
    .filter((operation) => operation.security.includes('adminToken'))
    .map((operation) => new RegExp(`^${operation.path.replace(/\{[^}]+\}/g, '[^/]+')}/?$`));
  return (path) => patterns.some((pattern) => pattern.test(path));
}
