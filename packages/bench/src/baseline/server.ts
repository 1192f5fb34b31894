import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { countMembersAddedSql, newId } from '@works-api/prisma';
import {
  type ActionDefinition,
  decide,
  type RequestAction,
  requestActions,
  type RequestStatus,
} from '@works-api/server/domain/requests/state-machine';
import { numberedSlug, slugify } from '@works-api/server/domain/slug';
import { requestSearchText, workSearchText } from '@works-api/server/domain/search/fold';
import { pgliteSql, postgresSql, type Sql } from './sql';

/**
 * The baseline: plain node:http and the database driver, doing by hand what the server does for the benchmarked
 * operations, against the same schema and data: the API key lookup by prefix with its SHA-256 check, the
 * membership check, the reads, the insert or update, and the event row in a transaction for the actions. It answers
 * with the same JSON. It validates nothing beyond what the SQL needs, has no framework and no ORM: it is the
 * "how fast could this be" reference that `pnpm bench` quotes ratios against. Not a product: never expose it.
 */

interface Actor {
  userId: string;
  firstName: string;
  lastName: string;
  email: string;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
  ) {
    super(code);
  }
}

const KEY_PATTERN = /^(wk_[a-z0-9]{10})_[A-Za-z0-9_-]{43}$/;
const LAST_USED_PRECISION_MS = 60_000;
const MAX_BODY_BYTES = 64 * 1024;

const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');
const iso = (date: Date | null): string | null => date?.toISOString() ?? null;
const userRecord = (row: { first_name: string; last_name: string; email: string }) => ({
  firstName: row.first_name,
  lastName: row.last_name,
  email: row.email,
});

async function authenticate(sql: Sql, authorization: string | undefined): Promise<Actor> {
  const presented = /^Bearer +(\S+) *$/i.exec(authorization ?? '')?.[1];
  const prefix = presented === undefined ? undefined : KEY_PATTERN.exec(presented)?.[1];
  if (presented === undefined || prefix === undefined) throw new HttpError(401, 'unauthenticated');
  const [key] = await sql.query<{
    id: string;
    user_id: string;
    secret_hash: string;
    revoked_at: Date | null;
    last_used_at: Date | null;
    first_name: string;
    last_name: string;
    email: string;
  }>(
    `SELECT k.id, k.user_id, k.secret_hash, k.revoked_at, k.last_used_at, u.first_name, u.last_name, u.email
     FROM api_keys k JOIN users u ON u.id = k.user_id WHERE k.prefix = $1`,
    [prefix],
  );
  const hash = sha256(presented);
  if (
    !key ||
    key.secret_hash.length !== hash.length ||
    !timingSafeEqual(Buffer.from(hash), Buffer.from(key.secret_hash))
  ) {
    throw new HttpError(401, 'unauthenticated');
  }
  if (key.revoked_at) throw new HttpError(401, 'unauthenticated');
  const now = new Date();
  if (!key.last_used_at || now.getTime() - key.last_used_at.getTime() > LAST_USED_PRECISION_MS) {
    await sql.query('UPDATE api_keys SET last_used_at = $2 WHERE id = $1', [key.id, now]);
  }
  return { userId: key.user_id, firstName: key.first_name, lastName: key.last_name, email: key.email };
}

const rank = { member: 1, admin: 2, owner: 3 } as const;

async function authorize(sql: Sql, actor: Actor, tenantId: string, minimum: keyof typeof rank): Promise<void> {
  const [membership] = await sql.query<{ role: keyof typeof rank }>(
    'SELECT role FROM memberships WHERE tenant_id = $1 AND user_id = $2',
    [tenantId, actor.userId],
  );
  if (!membership) throw new HttpError(404, 'not_found');
  if (rank[membership.role] < rank[minimum]) throw new HttpError(403, 'forbidden');
}

const isUniqueViolation = (error: unknown) => (error as { code?: string }).code === '23505';
async function withUniqueSlug<T>(
  name: string,
  fallback: string,
  nextNumber: (base: string) => Promise<number>,
  create: (slug: string) => Promise<T>,
) {
  // As the server does: the base slug first, then the next number from the base's counter.
  const base = slugify(name, fallback);
  let slug = base;
  for (let attempt = 1; ; attempt++) {
    try {
      return await create(slug);
    } catch (error) {
      if (!isUniqueViolation(error) || attempt >= 10) throw error;
    }
    slug = numberedSlug(base, await nextNumber(base));
  }
}

interface WorkRow {
  id: string;
  slug: string;
  name: string;
  description: string;
  created_at: Date;
  updated_at: Date;
  discarded_at: Date | null;
}

const presentWork = (work: WorkRow, owner: { first_name: string; last_name: string; email: string }) => ({
  id: work.id,
  slug: work.slug,
  name: work.name,
  description: work.description,
  createdAt: work.created_at.toISOString(),
  updatedAt: work.updated_at.toISOString(),
  discardedAt: iso(work.discarded_at),
  owner: userRecord(owner),
});

const actorRow = (actor: Actor) => ({ first_name: actor.firstName, last_name: actor.lastName, email: actor.email });
const cursorOf = (id: string) => Buffer.from(`v1:${id}`).toString('base64url');

async function pageOfWorks(sql: Sql, tenantId: string, limit: number) {
  const [rows, [count]] = await Promise.all([
    sql.query<WorkRow & { first_name: string; last_name: string; email: string }>(
      `SELECT w.id, w.slug, w.name, w.description, w.created_at, w.updated_at, w.discarded_at, u.first_name, u.last_name, u.email
       FROM works w JOIN users u ON u.id = w.owner_id
       WHERE w.tenant_id = $1 AND w.discarded_at IS NULL ORDER BY w.id DESC LIMIT $2`,
      [tenantId, limit + 1],
    ),
    // The kept count, as the server reads it (no count(*)).
    sql.query<{ count: number }>(
      'SELECT coalesce(sum(kept_works), 0)::int AS count FROM tenant_counts WHERE tenant_id = $1',
      [tenantId],
    ),
  ]);
  const hasNextPage = rows.length > limit;
  const edges = rows.slice(0, limit).map((row) => ({ cursor: cursorOf(row.id), node: presentWork(row, row) }));
  return { totalCount: count?.count ?? 0, edges, pageInfo: { hasNextPage, endCursor: edges.at(-1)?.cursor ?? null } };
}

async function createTenant(sql: Sql, actor: Actor, body: { name: string }) {
  const name = body.name.trim();
  const tenant = await withUniqueSlug(
    name,
    'tenant',
    async (base) =>
      (
        await sql.query<{ n: number }>(
          `INSERT INTO tenant_slug_counters AS c (base, last_number) VALUES ($1, 2)
           ON CONFLICT (base) DO UPDATE SET last_number = c.last_number + 1 RETURNING last_number AS n`,
          [base],
        )
      )[0]!.n,
    async (slug) => {
      // The tenant and its owner's membership in one statement: atomic, one round trip.
      const [row] = await sql.query<{ id: string; name: string; slug: string; created_at: Date; updated_at: Date }>(
        `WITH t AS (INSERT INTO tenants (id, name, slug, owner_id) VALUES ($1, $2, $3, $4) RETURNING *),
              m AS (INSERT INTO memberships (id, tenant_id, user_id, role) SELECT $5, t.id, $4, 'owner' FROM t
                    RETURNING tenant_id, user_id),
              ${countMembersAddedSql('m')}
         SELECT id, name, slug, created_at, updated_at FROM t`,
        [newId(), name, slug, actor.userId, newId()],
      );
      return row!;
    },
  );
  return {
    id: tenant.id,
    name: tenant.name,
    slug: tenant.slug,
    owner: userRecord(actorRow(actor)),
    createdAt: tenant.created_at.toISOString(),
    updatedAt: tenant.updated_at.toISOString(),
    members: { nodes: [{ role: 'owner', user: userRecord(actorRow(actor)) }] },
    works: { totalCount: 0, edges: [], pageInfo: { hasNextPage: false, endCursor: null } },
  };
}

async function getTenant(sql: Sql, actor: Actor, tenantId: string) {
  await authorize(sql, actor, tenantId, 'member');
  type Person = { first_name: string; last_name: string; email: string };
  const [[tenant], members, works] = await Promise.all([
    sql.query<{ id: string; name: string; slug: string; created_at: Date; updated_at: Date } & Person>(
      `SELECT t.id, t.name, t.slug, t.created_at, t.updated_at, u.first_name, u.last_name, u.email
       FROM tenants t JOIN users u ON u.id = t.owner_id WHERE t.id = $1`,
      [tenantId],
    ),
    sql.query<{ role: string } & Person>(
      `SELECT m.role, u.first_name, u.last_name, u.email FROM memberships m JOIN users u ON u.id = m.user_id
       WHERE m.tenant_id = $1 ORDER BY m.id LIMIT 100`,
      [tenantId],
    ),
    pageOfWorks(sql, tenantId, 20),
  ]);
  if (!tenant) throw new HttpError(404, 'not_found');
  return {
    id: tenant.id,
    name: tenant.name,
    slug: tenant.slug,
    owner: userRecord(tenant),
    createdAt: tenant.created_at.toISOString(),
    updatedAt: tenant.updated_at.toISOString(),
    members: { nodes: members.map((m) => ({ role: m.role, user: userRecord(m) })) },
    works,
  };
}

async function createWork(sql: Sql, actor: Actor, tenantId: string, body: { name: string; description?: string }) {
  await authorize(sql, actor, tenantId, 'member');
  const name = body.name.trim();
  const work = await withUniqueSlug(
    name,
    'work',
    async (base) =>
      (
        await sql.query<{ n: number }>(
          `INSERT INTO work_slug_counters AS c (tenant_id, base, last_number) VALUES ($1, $2, 2)
           ON CONFLICT (tenant_id, base) DO UPDATE SET last_number = c.last_number + 1 RETURNING last_number AS n`,
          [tenantId, base],
        )
      )[0]!.n,
    async (slug) =>
      (
        await sql.query<WorkRow>(
          `INSERT INTO works (id, tenant_id, slug, name, description, owner_id, search) VALUES ($1, $2, $3, $4, $5, $6, $7)
           RETURNING id, slug, name, description, created_at, updated_at, discarded_at`,
          [
            newId(),
            tenantId,
            slug,
            name,
            body.description ?? '',
            actor.userId,
            workSearchText({ name, slug, description: body.description ?? '' }),
          ],
        )
      )[0]!,
  );
  return presentWork(work, actorRow(actor));
}

interface RequestRow {
  id: string;
  work_id: string;
  status: RequestStatus;
  title: string;
  message: string;
  recipient_email: string;
  recipient_first_name: string;
  recipient_last_name: string;
  answer: string | null;
  validation: 'standard' | 'early' | null;
  cancel_reason: string | null;
  due_at: Date | null;
  created_at: Date;
  updated_at: Date;
  confirmed_at: Date | null;
  validated_at: Date | null;
  cancelled_at: Date | null;
}

const presentRequest = (r: RequestRow, owner: { first_name: string; last_name: string; email: string }) => ({
  id: r.id,
  workId: r.work_id,
  status: r.status,
  title: r.title,
  message: r.message,
  recipient: { email: r.recipient_email, firstName: r.recipient_first_name, lastName: r.recipient_last_name },
  answer: r.answer,
  validation: r.validation,
  cancelReason: r.cancel_reason,
  dueAt: iso(r.due_at),
  owner: userRecord(owner),
  createdAt: r.created_at.toISOString(),
  updatedAt: r.updated_at.toISOString(),
  confirmedAt: iso(r.confirmed_at),
  validatedAt: iso(r.validated_at),
  cancelledAt: iso(r.cancelled_at),
});

interface CreateRequestBody {
  title: string;
  message?: string;
  recipient: { email: string; firstName?: string; lastName?: string };
  dueAt?: string;
}

async function createRequest(sql: Sql, actor: Actor, tenantId: string, workId: string, body: CreateRequestBody) {
  await authorize(sql, actor, tenantId, 'member');
  const [work] = await sql.query<{ discarded_at: Date | null }>(
    'SELECT discarded_at FROM works WHERE id = $1 AND tenant_id = $2',
    [workId, tenantId],
  );
  if (!work) throw new HttpError(404, 'not_found');
  if (work.discarded_at) throw new HttpError(409, 'work_discarded');
  const fields = {
    title: body.title.trim(),
    message: body.message ?? '',
    recipientEmail: body.recipient.email.trim().toLowerCase(),
    recipientFirstName: (body.recipient.firstName ?? '').trim(),
    recipientLastName: (body.recipient.lastName ?? '').trim(),
  };
  const [row] = await sql.query<RequestRow>(
    // Counted as the server counts it (its work's count slot of this session), in the same statement.
    `WITH created AS (
       INSERT INTO requests (id, work_id, title, message, recipient_email, recipient_first_name, recipient_last_name, due_at, owner_id,
                             tenant_id, search)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING *),
     counted AS (
       INSERT INTO work_counts AS c (work_id, slot, pending) SELECT work_id, counter_slot(), 1 FROM created
       ON CONFLICT (work_id, slot) DO UPDATE SET pending = c.pending + 1)
     SELECT * FROM created`,
    [
      newId(),
      workId,
      fields.title,
      fields.message,
      fields.recipientEmail,
      fields.recipientFirstName,
      fields.recipientLastName,
      body.dueAt === undefined ? null : new Date(body.dueAt),
      actor.userId,
      tenantId,
      requestSearchText(fields),
    ],
  );
  return presentRequest(row!, actorRow(actor));
}

type Action = RequestAction;
const snakeCase = (field: string) => field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
// The columns each action sets besides status and updated_at ($3 is now, $5 the answer or reason), from the
// server's own table of what each action does.
const actionSets = Object.fromEntries(
  Object.entries(requestActions).map(([action, effect]) => {
    const { stamp, validation, note } = effect as ActionDefinition;
    return [
      action,
      [
        `${snakeCase(stamp)} = $3`,
        ...(validation ? [`validation = '${validation}'`] : []),
        ...(note ? [`${snakeCase(note)} = $5`] : []),
      ].join(', '),
    ];
  }),
) as Record<Action, string>;
const isAction = (value: string | undefined): value is Action => value !== undefined && value in actionSets;
const takesNote = (action: Action) => (requestActions[action] as ActionDefinition).note !== undefined;

async function pageOfRequests(
  sql: Sql,
  actor: Actor,
  tenantId: string,
  workId: string,
  status: RequestStatus | null,
  limit: number,
) {
  await authorize(sql, actor, tenantId, 'member');
  const [work] = await sql.query('SELECT 1 FROM works WHERE id = $1 AND tenant_id = $2', [workId, tenantId]);
  if (!work) throw new HttpError(404, 'not_found');
  // A null status matches every request, as the server's list does without ?status=.
  const where = 'r.work_id = $1 AND ($2::request_status IS NULL OR r.status = $2)';
  const [rows, [count]] = await Promise.all([
    sql.query<RequestRow & { first_name: string; last_name: string; email: string }>(
      `SELECT r.*, u.first_name, u.last_name, u.email FROM requests r JOIN users u ON u.id = r.owner_id
       WHERE ${where} ORDER BY r.id DESC LIMIT $3`,
      [workId, status, limit + 1],
    ),
    // The kept counts, as the server reads them (no count(*)).
    sql.query<{ count: number }>(
      `SELECT coalesce(sum(CASE $2::request_status WHEN 'pending' THEN pending WHEN 'confirmed' THEN confirmed
                WHEN 'validated' THEN validated WHEN 'cancelled' THEN cancelled
                ELSE pending + confirmed + validated + cancelled END), 0)::int AS count
       FROM work_counts WHERE work_id = $1`,
      [workId, status],
    ),
  ]);
  const hasNextPage = rows.length > limit;
  const edges = rows.slice(0, limit).map((row) => ({ cursor: cursorOf(row.id), node: presentRequest(row, row) }));
  return { totalCount: count?.count ?? 0, edges, pageInfo: { hasNextPage, endCursor: edges.at(-1)?.cursor ?? null } };
}

async function actOnRequest(
  sql: Sql,
  actor: Actor,
  tenantId: string,
  workId: string,
  requestId: string,
  action: Action,
  note?: string,
) {
  await authorize(sql, actor, tenantId, 'member');
  type Current = RequestRow & { work_discarded_at: Date | null; first_name: string; last_name: string; email: string };
  const [current] = await sql.query<Current>(
    `SELECT r.*, w.discarded_at AS work_discarded_at, u.first_name, u.last_name, u.email
     FROM requests r JOIN works w ON w.id = r.work_id JOIN users u ON u.id = r.owner_id
     WHERE r.id = $1 AND r.work_id = $2 AND w.tenant_id = $3`,
    [requestId, workId, tenantId],
  );
  if (!current) throw new HttpError(404, 'not_found');
  if (current.work_discarded_at) throw new HttpError(409, 'work_discarded');
  const decision = decide(action, current);
  if (decision.kind === 'repeat') return presentRequest(current, current);
  if (decision.kind === 'conflict') throw new HttpError(409, 'invalid_transition');
  const now = new Date();
  const updated = await sql.transaction(async (tx) => {
    const params = [requestId, current.status, now, decision.to, ...(takesNote(action) ? [note ?? null] : [])];
    const [row] = await tx.query<RequestRow>(
      `UPDATE requests SET status = $4, updated_at = $3, ${actionSets[action]}
       WHERE id = $1 AND status = $2 AND EXISTS (SELECT 1 FROM works w WHERE w.id = requests.work_id AND w.discarded_at IS NULL)
       RETURNING *`,
      params,
    );
    if (!row) return undefined;
    await tx.query(
      `INSERT INTO request_events (id, request_id, action, from_status, to_status, actor_id, note, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [newId(), requestId, action, current.status, decision.to, actor.userId, note ?? null, now],
    );
    return row;
  });
  // Lost a race: the server reads again and decides; the benchmark never races, so a plain conflict will do.
  if (!updated) throw new HttpError(409, 'invalid_transition');
  return presentRequest(updated, current);
}

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

async function route(sql: Sql, req: IncomingMessage): Promise<{ status: number; body: unknown; location?: string }> {
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
      const request = await createRequest(sql, actor, tenantId, workId, (await readJson(req)) as CreateRequestBody);
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
      return { status: 200, body: await actOnRequest(sql, actor, tenantId, workId, requestId, action, note) };
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
  const server = createServer((req, res) => {
    route(sql, req).then(
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
    server.once('close', () => void sql.close().then(() => process.exit(0)));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

void main();
