import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { unwrap } from '@works-api/client';
import { databaseEnv, removeDataDirs, type ServerProcess, spawnServer } from '../support/process';
import { type Receiver, startReceiver } from '../support/receiver';
import { ADMIN_TOKEN, createUserAt } from '../support/server';

/**
 * Traces of the built server, exported by the OpenTelemetry SDK over OTLP/HTTP (JSON) to a real collector on
 * loopback: a small node:http server that decodes what the exporter sends, as an OpenTelemetry Collector would.
 */
interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
}
interface ExportedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Record<string, string | number | boolean>;
  links?: Array<{ traceId: string; spanId: string }>;
  service: string;
}

const SPAN_KIND_SERVER = 2;
const SPAN_KIND_CLIENT = 3;

const valueOf = (value: OtlpValue): string | number | boolean =>
  value.stringValue ??
  (value.intValue !== undefined ? Number(value.intValue) : (value.boolValue ?? value.doubleValue ?? ''));

interface Collector {
  url: string;
  spans: ExportedSpan[];
  /** Resolves with the spans once `found` picks what it needs from them (rejects after 15 s). */
  waitFor<T>(found: (spans: ExportedSpan[]) => T | undefined): Promise<T>;
  close(): Promise<void>;
}

async function startCollector(): Promise<Collector> {
  const spans: ExportedSpan[] = [];
  let changed: () => void = () => undefined;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      expect(req.url).toBe('/v1/traces');
      expect(req.headers['content-type']).toBe('application/json');
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        resourceSpans: Array<{
          resource: { attributes: Array<{ key: string; value: OtlpValue }> };
          scopeSpans: Array<{
            spans: Array<
              Omit<ExportedSpan, 'attributes' | 'service'> & { attributes?: Array<{ key: string; value: OtlpValue }> }
            >;
          }>;
        }>;
      };
      for (const resourceSpan of body.resourceSpans) {
        const service = String(
          valueOf(resourceSpan.resource.attributes.find((a) => a.key === 'service.name')?.value ?? {}),
        );
        for (const scope of resourceSpan.scopeSpans)
          for (const span of scope.spans)
            spans.push({
              ...span,
              service,
              attributes: Object.fromEntries((span.attributes ?? []).map((a) => [a.key, valueOf(a.value)])),
            });
      }
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
      changed();
    });
  });
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    waitFor(found) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`expected spans not exported; got ${spans.length}`)), 15_000);
        const check = () => {
          const result = found(spans);
          if (result === undefined) return;
          clearTimeout(timer);
          changed = () => undefined;
          resolve(result);
        };
        changed = check;
        check();
      });
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

let collector: Collector;
let hooks: Receiver;
let server: ServerProcess;
const tracedServer = async (env: Record<string, string> = {}) =>
  spawnServer({
    ...(await databaseEnv()),
    ADMIN_TOKEN,
    WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    // Woken by its own commits only: on a shared PostgreSQL it stays out of other test files' deliveries.
    WEBHOOK_POLL_INTERVAL_MS: '600000',
    OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_SERVICE_NAME: 'works-api-under-test',
    OTEL_BSP_SCHEDULE_DELAY: '50',
    ...env,
  });
const stop = async (spawned: ServerProcess) => {
  spawned.child.kill('SIGTERM');
  await spawned.exited;
};
beforeAll(async () => {
  collector = await startCollector();
  hooks = await startReceiver();
  server = await tracedServer();
});
afterAll(async () => {
  await stop(server);
  await collector.close();
  await hooks.close();
  removeDataDirs();
});

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT_ID = '00f067aa0ba902b7';

it('traces a request in one server span named after its operationId, in a new trace that links an incoming one', async () => {
  expect(server.lines.find((line) => line.msg === 'works-api starting')?.config).toMatchObject({
    traces: `otlp http/json to ${collector.url}; an incoming traceparent is linked, not continued`,
  });
  const api = (await createUserAt(server.baseUrl, 'traced')).client;
  const { tenant } = unwrap(
    await api.createTenant({
      body: { name: 'Traced Inc' },
      headers: { traceparent: `00-${TRACE_ID}-${PARENT_ID}-01` },
    }),
  );
  unwrap(await api.getTenant({ params: { path: { tenant_id: tenant.id } } }));

  // Any client can send a traceparent: it is not continued (that would let a client join another's trace, or
  // turn sampling on), but linked, so a trace the client shows us still leads here.
  const createSpan = await collector.waitFor((spans) =>
    spans.find((s) => s.links?.some((link) => link.traceId === TRACE_ID) && s.kind === SPAN_KIND_SERVER),
  );
  expect(createSpan.traceId).not.toBe(TRACE_ID);
  expect(createSpan.parentSpanId ?? '').toBe('');
  expect(createSpan.links).toEqual([expect.objectContaining({ traceId: TRACE_ID, spanId: PARENT_ID })]);
  expect(collector.spans.filter((s) => s.traceId === TRACE_ID)).toEqual([]);
  expect(createSpan).toMatchObject({
    name: 'createTenant',
    service: 'works-api-under-test',
    attributes: {
      'http.request.method': 'POST',
      'http.route': '/v1/tenants',
      'http.response.status_code': 201,
      'works.operation_id': 'createTenant',
    },
  });
  // Its database statements are its descendants, in the same trace, each with its SQL.
  const inTrace = collector.spans.filter((s) => s.traceId === createSpan.traceId);
  const statements = inTrace.filter((s) => typeof s.attributes['db.query.text'] === 'string');
  expect(statements.length).toBeGreaterThan(0);
  const byId = new Map(inTrace.map((s) => [s.spanId, s]));
  for (const statement of statements) {
    let ancestor: ExportedSpan | undefined = statement;
    while (ancestor && ancestor.spanId !== createSpan.spanId) ancestor = byId.get(ancestor.parentSpanId ?? '');
    expect(ancestor).toBe(createSpan);
  }
  expect(statements.map((s) => s.attributes['db.query.text']).join('\n')).toMatch(/tenants/);

  // Without a traceparent, a new trace; the route is the template, never the path with the id.
  const getSpan = await collector.waitFor((spans) =>
    spans.find((s) => s.name === 'getTenant' && s.kind === SPAN_KIND_SERVER),
  );
  expect(getSpan.traceId).not.toBe(createSpan.traceId);
  expect(getSpan.parentSpanId ?? '').toBe('');
  expect(getSpan.links ?? []).toEqual([]);
  expect(getSpan.attributes['http.route']).toBe('/v1/tenants/{tenant_id}');
  expect(JSON.stringify(getSpan.attributes)).not.toContain(tenant.id);

  // A webhook delivery attempt: a client span whose context the receiver gets as `traceparent`. Receivers put
  // tokens in the path and the query: neither reaches a span.
  const secretUrl = `${hooks.url}/T0001/s3cretPathToken?token=s3cretQueryToken`;
  unwrap(await api.createWebhookEndpoint({ params: { path: { tenant_id: tenant.id } }, body: { url: secretUrl } }));
  const { work } = unwrap(await api.createWork({ params: { path: { tenant_id: tenant.id } }, body: { name: 'W' } }));
  unwrap(
    await api.createRequest({
      params: { path: { tenant_id: tenant.id, work_id: work.id } },
      body: { title: 'T', recipient: { email: 'r@example.com' } },
    }),
  );
  const [delivered] = await hooks.waitFor(1);
  const traceparent = String(delivered!.headers.traceparent);
  const [, traceId, spanId, flags] = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/.exec(traceparent) ?? [];
  expect(flags).toBe('01');
  const attempt = await collector.waitFor((spans) => spans.find((s) => s.spanId === spanId));
  expect(attempt).toMatchObject({
    traceId,
    name: 'webhook delivery',
    kind: SPAN_KIND_CLIENT,
    attributes: {
      'http.request.method': 'POST',
      'http.response.status_code': 200,
      'url.full': `${new URL(hooks.url).origin}/REDACTED?REDACTED`,
      'works.webhook.attempt': 1,
      'works.webhook.event_id': delivered!.headers['webhook-id'],
    },
  });
  expect(JSON.stringify(collector.spans)).not.toMatch(/s3cret/);
});

it('continues an incoming traceparent when TRUST_TRACEPARENT says the edge in front vets it', async () => {
  const trusting = await tracedServer({ TRUST_TRACEPARENT: 'true' });
  try {
    expect(trusting.lines.find((line) => line.msg === 'works-api starting')?.config).toMatchObject({
      traces: `otlp http/json to ${collector.url}; an incoming traceparent is continued (TRUST_TRACEPARENT)`,
    });
    const traceId = '5bf92f3577b34da6a3ce929d0e0e4736';
    const api = (await createUserAt(trusting.baseUrl, 'trusted')).client;
    unwrap(
      await api.createTenant({
        body: { name: 'Trusted Edge' },
        headers: { traceparent: `00-${traceId}-${PARENT_ID}-01` },
      }),
    );
    const span = await collector.waitFor((spans) =>
      spans.find((s) => s.traceId === traceId && s.kind === SPAN_KIND_SERVER),
    );
    expect(span).toMatchObject({ name: 'createTenant', parentSpanId: PARENT_ID });
    expect(span.links ?? []).toEqual([]);
  } finally {
    await stop(trusting);
  }
});
