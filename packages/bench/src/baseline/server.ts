import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { RequestStatus } from '@works-api/server/domain/requests/state-machine';
import { authenticate, authorize } from './access';
import { HttpError } from './http-error';
import { actOnRequest, type CreateRequestBody, createRequest, isAction, pageOfRequests } from './requests';
import { type OutboxWorkers, startOutboxWorkers } from './outbox';
import { pgliteSql, postgresSql, type Sql } from './sql';
import { createTenant, createWork, getTenant, pageOfWorks } from './tenants-and-works';

/**
 * The baseline: plain node:http and the database driver, doing by hand what the server does for the benchmarked
 * operations, against the same schema and data: the API key lookup by prefix with its SHA-256 check, the
 * membership check, the reads, the insert or update, and the event row in a transaction for the actions. It answers
 * with the same JSON. It validates nothing beyond what the SQL needs, has no framework and no ORM: it is the
 * "how fast could this be" reference that `pnpm bench` quotes ratios against. Not a product: never expose it.
 */

const MAX_BODY_BYTES = 64 * 1024;

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new HttpError(413, 'payload_too_large');
    chunks.push(chunk as Buffer);
  }
  if (size === 0) return undefined;
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new HttpError(400, 'malformed_json');
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

async function route(
  sql: Sql,
  outbox: OutboxWorkers,
  req: IncomingMessage,
): Promise<{ status: number; body: unknown; location?: string }> {
  const url = new URL(req.url ?? '/', 'http://baseline');
  const parts = url.pathname.split('/').slice(1);
  if (parts[0] !== 'v1' || parts[1] !== 'tenants') throw new HttpError(404, 'not_found');
  const actor = await authenticate(sql, req.headers.authorization);
  const [, , tenantId, works, workId, requests, requestId, action] = parts;
  for (const id of [tenantId, workId, requestId])
    if (id !== undefined && !UUID.test(id)) throw new HttpError(404, 'not_found');
  const method = req.method;
  if (tenantId === undefined && method === 'POST') {
    const tenant = await createTenant(sql, actor, (await readJson(req)) as { name: string });
    return { status: 201, body: { tenant }, location: `/v1/tenants/${tenant.id}` };
  }
  if (tenantId !== undefined && works === undefined && method === 'GET') {
    return { status: 200, body: { tenant: await getTenant(sql, actor, tenantId) } };
  }
  if (tenantId !== undefined && works === 'works' && workId === undefined) {
    if (method === 'GET') {
      await authorize(sql, actor, tenantId, 'member');
      const limit = Number(url.searchParams.get('limit') ?? 20);
      return { status: 200, body: { works: await pageOfWorks(sql, tenantId, limit) } };
    }
    if (method === 'POST') {
      const work = await createWork(sql, actor, tenantId, (await readJson(req)) as { name: string });
      return { status: 201, body: { work }, location: `/v1/tenants/${tenantId}/works/${work.id}` };
    }
  }
  if (tenantId !== undefined && workId !== undefined && requests === 'requests') {
    if (requestId === undefined && method === 'POST') {
      const request = await createRequest(
        sql,
        outbox,
        actor,
        tenantId,
        workId,
        (await readJson(req)) as CreateRequestBody,
      );
      return {
        status: 201,
        body: { request },
        location: `/v1/tenants/${tenantId}/works/${workId}/requests/${request.id}`,
      };
    }
    if (requestId === undefined && method === 'GET') {
      const status = url.searchParams.get('status') as RequestStatus | null;
      const limit = Number(url.searchParams.get('limit') ?? 20);
      return { status: 200, body: { requests: await pageOfRequests(sql, actor, tenantId, workId, status, limit) } };
    }
    // Cancel is a DELETE of the request's `cancel` resource; the other actions are PUTs.
    if (requestId !== undefined && isAction(action) && method === (action === 'cancel' ? 'DELETE' : 'PUT')) {
      const body = (await readJson(req)) as { answer?: string; reason?: string } | undefined;
      const note = body?.answer ?? body?.reason;
      return { status: 200, body: await actOnRequest(sql, outbox, actor, tenantId, workId, requestId, action, note) };
    }
  }
  throw new HttpError(404, 'not_found');
}

function send(res: ServerResponse, status: number, body: unknown, contentType = 'application/json', location?: string) {
  const json = JSON.stringify(body);
  const headers: Record<string, string | number> = {
    'Content-Type': contentType,
    'Content-Length': Buffer.byteLength(json),
  };
  if (location) headers.Location = location;
  res.writeHead(status, headers).end(json);
}

async function main() {
  const url = process.env.DATABASE_URL;
  const sql = url ? postgresSql(url) : await pgliteSql(process.env.PGLITE_DIR ?? '');
  const outbox = startOutboxWorkers(sql);
  const server = createServer((req, res) => {
    route(sql, outbox, req).then(
      (result) => send(res, result.status, result.body, 'application/json', result.location),
      (error: unknown) => {
        if (!(error instanceof HttpError)) console.error('baseline: internal error', error);
        const status = error instanceof HttpError ? error.status : 500;
        const code = error instanceof HttpError ? error.code : 'internal_error';
        send(res, status, { status, code }, 'application/problem+json');
      },
    );
  });
  server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () =>
    console.log(`baseline listening on ${JSON.stringify(server.address())}`),
  );
  const stop = () => {
    server.close();
    server.closeIdleConnections();
    outbox.stop();
    server.once('close', () => void sql.close().then(() => process.exit(0)));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

void main();
