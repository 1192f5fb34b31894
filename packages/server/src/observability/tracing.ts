import type { Request, Response } from 'express';
import type { AttemptOutcome } from '../webhooks/send';

/**
 * OpenTelemetry traces. This module, the SDK and the instrumentations are imported only when the OTEL_* variables
 * ask for traces (config.ts `tracingSettings`), so a server without them loads none of it and its requests do
 * not pay for it (README: the same-run A/B). What a trace holds:
 *
 * - one SERVER span per request, named after its operationId, with the route template (`http.route`), never the
 *   raw path with its ids; an incoming W3C `traceparent` is continued (propagators: OTEL_PROPAGATORS);
 * - Prisma's own spans under it (`prisma:client:operation` → `prisma:client:db_query`, with the SQL), which work
 *   the same on PGlite and PostgreSQL through Prisma 7's driver adapters (the pg driver's instrumentation would
 *   see PostgreSQL only), and a `db.query` span for each statement sent around Prisma (plain-statement.ts);
 * - one CLIENT span per webhook delivery attempt, whose context goes to the receiver as `traceparent`.
 *
 * The SDK reads the rest of the standard variables itself: exporter, endpoint, protocol, headers, sampler,
 * service name and resource attributes, batch settings.
 */
export interface Tracing {
  /** Runs the rest of the request inside its server span; `describe` names it once the response is done. */
  serveRequest(req: Request, res: Response, next: () => void, describe: (req: Request) => RequestLabels): void;
  /** One webhook attempt in a client span; `headers` gets the span's `traceparent`. */
  deliveryAttempt(
    attempt: DeliveryAttempt,
    headers: Record<string, string>,
    send: () => Promise<AttemptOutcome>,
  ): Promise<AttemptOutcome>;
  /** A statement sent around Prisma, as a child of the current span (none outside a traced operation). */
  statement<T>(text: string, run: () => Promise<T>): Promise<T>;
  /** Sends the spans still buffered, then stops. */
  shutdown(): Promise<void>;
}

export interface RequestLabels {
  operation: string;
  route: string | null;
}

export interface DeliveryAttempt {
  url: string;
  deliveryId: string;
  eventId: string;
  endpointId: string;
  attempt: number;
}

/** Spans Prisma makes that say little in a request's trace: argument serialisation, and the pool's own connect. */
const QUIET_PRISMA_SPANS = ['prisma:client:serialize', 'prisma:client:connect', 'prisma:client:disconnect'];

export async function startTracing(env: NodeJS.ProcessEnv): Promise<Tracing> {
  const [api, { NodeSDK }, { PrismaInstrumentation }] = await Promise.all([
    import('@opentelemetry/api'),
    import('@opentelemetry/sdk-node'),
    import('@prisma/instrumentation'),
  ]);
  const { context, propagation, trace, SpanKind, SpanStatusCode, ROOT_CONTEXT } = api;
  const sdk = new NodeSDK({
    // The service is `works-api` unless OTEL_SERVICE_NAME (or OTEL_RESOURCE_ATTRIBUTES) names it.
    ...(!env.OTEL_SERVICE_NAME && !/(^|,)\s*service\.name=/.test(env.OTEL_RESOURCE_ATTRIBUTES ?? '')
      ? { serviceName: 'works-api' }
      : {}),
    // Traces only: metrics are Prometheus' (/metrics) and logs go to stdout.
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [new PrismaInstrumentation({ ignoreSpanTypes: QUIET_PRISMA_SPANS })],
  });
  sdk.start();
  const tracer = trace.getTracer('works-api');

  return {
    serveRequest(req, res, next, describe) {
      const parent = propagation.extract(ROOT_CONTEXT, req.headers);
      const span = tracer.startSpan(
        req.method,
        { kind: SpanKind.SERVER, attributes: { 'http.request.method': req.method, 'url.scheme': 'http' } },
        parent,
      );
      res.once('close', () => {
        const { operation, route } = describe(req);
        span.updateName(operation);
        span.setAttribute('works.operation_id', operation);
        if (route) span.setAttribute('http.route', route);
        span.setAttribute('http.response.status_code', res.statusCode);
        if (req.id) span.setAttribute('works.request_id', req.id);
        // A 4xx is the client's; only a 5xx marks the server's span as failed (semantic conventions).
        if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
        if (!res.writableFinished) span.setAttribute('works.aborted', true);
        span.end();
      });
      context.with(trace.setSpan(parent, span), next);
    },

    deliveryAttempt(attempt, headers, send) {
      const target = new URL(attempt.url);
      return tracer.startActiveSpan(
        'webhook delivery',
        {
          kind: SpanKind.CLIENT,
          // The new trace of an attempt: deliveries run outside the request that wrote the event.
          root: true,
          attributes: {
            'http.request.method': 'POST',
            // Scheme, host and path only: a query string could hold a receiver's token.
            'url.full': `${target.protocol}//${target.host}${target.pathname}`,
            'server.address': target.hostname,
            'server.port': Number(target.port || (target.protocol === 'https:' ? 443 : 80)),
            'works.webhook.delivery_id': attempt.deliveryId,
            'works.webhook.event_id': attempt.eventId,
            'works.webhook.endpoint_id': attempt.endpointId,
            'works.webhook.attempt': attempt.attempt,
          },
        },
        async (span) => {
          propagation.inject(context.active(), headers);
          try {
            const outcome = await send();
            if (outcome.statusCode !== null) span.setAttribute('http.response.status_code', outcome.statusCode);
            if (!outcome.ok) {
              span.setAttribute('error.type', outcome.statusCode === null ? 'unreachable' : String(outcome.statusCode));
              span.setStatus({ code: SpanStatusCode.ERROR, ...(outcome.error && { message: outcome.error }) });
            }
            return outcome;
          } finally {
            span.end();
          }
        },
      );
    },

    statement(text, run) {
      if (!trace.getSpan(context.active())) return run();
      const operation = /^\s*(\w+)/.exec(text)?.[1]?.toUpperCase() ?? 'SQL';
      return tracer.startActiveSpan(
        `db.query ${operation}`,
        {
          kind: SpanKind.CLIENT,
          attributes: { 'db.system.name': 'postgresql', 'db.operation.name': operation, 'db.query.text': text },
        },
        async (span) => {
          try {
            return await run();
          } catch (error) {
            span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
            throw error;
          } finally {
            span.end();
          }
        },
      );
    },

    shutdown: () => sdk.shutdown(),
  };
}
