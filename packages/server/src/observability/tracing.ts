import type { Request, Response } from 'express';
import type { AttemptOutcome } from '../webhooks/send';

/**
 * OpenTelemetry traces. This module, the SDK and the instrumentations are imported only when the OTEL_* variables
 * ask for traces (config.ts `tracingSettings`), so a server without them loads none of it and its requests do
 * not pay for it (README: the same-run A/B). What a trace holds:
 *
 * - one SERVER span per request, named after its operationId, with the route template (`http.route`), never the
 *   raw path with its ids. An incoming W3C `traceparent` (propagators: OTEL_PROPAGATORS) is continued only when
 *   TRUST_TRACEPARENT says the edge in front of us vets it; otherwise any client could join its requests to
 *   another's trace, force sampling on, or send baggage, so the request starts a new trace that links the one it
 *   came with;
 * - Prisma's own spans under it (`prisma:client:operation` → `prisma:client:db_query`, with the SQL), which work
 *   the same on PGlite and PostgreSQL through Prisma 7's driver adapters (the pg driver's instrumentation would
 *   see PostgreSQL only), and a `db.query` span for each statement sent around Prisma (prisma/src/statements/send.ts);
 * - one CLIENT span per webhook delivery attempt, whose context goes to the receiver as `traceparent`; its URL
 *   attribute keeps the scheme and host, never the path or query (where receivers put tokens).
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

export interface TracingOptions {
  /** TRUST_TRACEPARENT: continue an incoming trace context instead of only linking it. */
  trustIncoming: boolean;
}

/** A webhook URL as a span may show it: scheme, host and port, the path and query replaced (they may hold tokens). */
export function redactedUrl(url: URL): string {
  const path = url.pathname === '/' ? '/' : '/REDACTED';
  return `${url.protocol}//${url.host}${path}${url.search === '' ? '' : '?REDACTED'}`;
}

export async function startTracing(env: NodeJS.ProcessEnv, { trustIncoming }: TracingOptions): Promise<Tracing> {
  const [api, { NodeSDK }, { PrismaInstrumentation }] = await Promise.all([
    import('@opentelemetry/api'),
    import('@opentelemetry/sdk-node'),
    import('@prisma/instrumentation'),
  ]);
  const { context, isSpanContextValid, propagation, trace, SpanKind, SpanStatusCode, ROOT_CONTEXT } = api;
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
      const incoming = propagation.extract(ROOT_CONTEXT, req.headers);
      const parent = trustIncoming ? incoming : ROOT_CONTEXT;
      const came = trustIncoming ? undefined : trace.getSpanContext(incoming);
      const span = tracer.startSpan(
        req.method,
        {
          kind: SpanKind.SERVER,
          attributes: { 'http.request.method': req.method, 'url.scheme': 'http' },
          ...(came && isSpanContextValid(came) && { links: [{ context: came }] }),
        },
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
            // Scheme and host only: a receiver's path or query may hold its token.
            'url.full': redactedUrl(target),
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
