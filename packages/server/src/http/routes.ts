import { Router, type RequestHandler } from 'express';
import type { Db } from '../db/client';
import type { Limits } from '../domain/limits';
import type { WebhookSettings } from '../domain/webhooks/endpoints';
import type { OutageMonitor } from '../db/outage';
import { entityTag, ifMatchCondition, noneMatchHit, resourceOf } from './etag';
import type { HandlerContext, HandlerMap, OperationId } from './handler';
import { idempotentCreation, replayCheckFor } from './idempotency';
import type { Logger } from '../observability/logger';
import { pathPattern, type Spec, type SpecOperation, toExpressPath } from './spec';
import { textRulesFor } from './text-rules';

/**
 * Mounts one route per operation of the contract, each answered by its handler. What an operation declares in
 * the spec switches its HTTP behaviour on: `Idempotency-Key` → replayable creations, an `ETag` response header
 * → entity tags (and `304` for `If-None-Match`), `If-Match` → a precondition handed to the domain.
 */
export function contractRoutes(
  spec: Spec,
  handlers: HandlerMap,
  db: Db,
  logger: Logger,
  outage: OutageMonitor,
  webhooks: WebhookSettings,
  limits: Limits,
  onIdempotentReplay?: () => void,
): Router {
  const router = Router({ caseSensitive: true }); // as the app's routing (app.ts)
  for (const operation of spec.operations) {
    const handler = handlers[operation.operationId] as unknown as RuntimeHandler | undefined;
    if (!handler) throw new Error(`openapi/api.yaml has ${operation.operationId}, which has no handler`);
    const chain: RequestHandler[] = [];
    // Before the Idempotency-Key is taken: a refused body must not hold the key.
    const textRules = textRulesFor(spec, operation);
    if (textRules) chain.push(textRules);
    if (operation.takes.idempotencyKey)
      chain.push(
        idempotentCreation(db, logger, {
          etag: operation.etag,
          outage,
          beforeReplay: replayCheckFor(db, operation.operationId),
          ...(onIdempotentReplay && { onReplay: onIdempotentReplay }),
        }),
      );
    chain.push(respondWith(spec.basePath, operation, handler, db, webhooks, limits));
    router[operation.method](toExpressPath(operation.path), ...chain);
  }
  return router;
}

/** A handler as the router sees it: the validator has already made the request match the handler's types. */
type RuntimeHandler = (
  context: HandlerContext<OperationId>,
) => Promise<{ status: number; body?: unknown; location?: string }>;

function respondWith(
  basePath: string,
  operation: SpecOperation,
  handler: RuntimeHandler,
  db: Db,
  webhooks: WebhookSettings,
  limits: Limits,
): RequestHandler {
  const { etag, takes } = operation;
  return async (req, res) => {
    const ifMatch = takes.ifMatch ? req.headers['if-match'] : undefined;
    const result = await handler({
      params: req.params as never,
      query: req.query,
      body: req.body as never,
      actor: req.actor ?? null,
      recipientToken: req.recipientToken,
      db,
      webhooks,
      limits,
      ifMatch: ifMatch === undefined ? undefined : ifMatchCondition(ifMatch),
    });
    if (result.location) res.location(basePath + result.location);
    if (result.body === undefined) return void res.status(result.status).end();
    if (etag.has(result.status)) {
      const tag = entityTag(resourceOf(result.body));
      res.setHeader('ETag', tag);
      if (takes.ifNoneMatch && noneMatchHit(req.headers['if-none-match'], tag)) return void res.status(304).end();
    }
    res.status(result.status).json(result.body);
  };
}

/** True for the operations the spec authenticates with the operator token rather than an API key. */
export const operatorPathMatcher = (spec: Spec): ((path: string) => boolean) => pathMatcher(spec, 'adminToken');

/** True for the operations the spec authenticates with a recipient's answer token. */
export const recipientPathMatcher = (spec: Spec): ((path: string) => boolean) => pathMatcher(spec, 'recipientToken');

function pathMatcher(spec: Spec, scheme: string): (path: string) => boolean {
  const patterns = spec.operations
    .filter((operation) => operation.security.includes(scheme))
    .map((operation) => pathPattern(operation.path));
  return (path) => patterns.some((pattern) => pattern.test(path));
}
