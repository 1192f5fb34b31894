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
import { mailCaps, type OutboxWorkers, webhookEvent } from './outbox';
import type { Sql } from './sql';

// The baseline's request operations: create a request, list a work's requests, and the actions on one.

export interface CreateRequestBody {
  title: string;
  message?: string;
  recipient: { email: string; firstName?: string; lastName?: string };
  dueAt?: string;
}

/** What the server answers, on the request row, when the address stopped the tenant's emails. */
const EMAILS_STOPPED = 'The recipient stopped emails from this tenant.';

/**
 * One statement, as the server's: the email's place under the daily caps (take_mail_allowance, which also says
 * whether the address stopped the tenant's emails), the request, its work's count, its email in the mail outbox
 * and its `request.created` webhook event.
 */
const INSERT_REQUEST = `WITH allowance AS (
    SELECT take_mail_allowance($10::uuid, $9::uuid, $5, $13::date, $14::uuid, $15, $16, $17, $18, true) AS stopped),
  created AS (
    INSERT INTO requests (id, work_id, title, message, recipient_email, recipient_first_name, recipient_last_name,
                          due_at, owner_id, tenant_id, search, created_at, updated_at, email_status, email_failure,
                          emails_stopped)
    SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $12,
           CASE WHEN a.stopped THEN 'dropped' ELSE 'queued' END::mail_status,
           CASE WHEN a.stopped THEN $19 END, a.stopped
    FROM allowance a RETURNING id, emails_stopped),
  counted AS (
    INSERT INTO work_counts AS c (work_id, slot, pending) SELECT $2, counter_slot(), 1 FROM created
    ON CONFLICT (work_id, slot) DO UPDATE SET pending = c.pending + 1),
  mailed AS (
    INSERT INTO mail_outbox (id, kind, tenant_id, request_id, next_attempt_at, created_at)
    SELECT $20, 'request', $10, id, $12, $12 FROM created WHERE NOT emails_stopped)
  INSERT INTO webhook_events (id, tenant_id, type, ordering_key, body, created_at)
  SELECT $21, $10, 'request.created', id, $22, $12 FROM created
  RETURNING (SELECT emails_stopped FROM created) AS stopped`;

export async function createRequest(
  sql: Sql,
  outbox: OutboxWorkers,
  actor: Actor,
  tenantId: string,
  workId: string,
  body: CreateRequestBody,
) {
  await authorize(sql, actor, tenantId, 'member');
  const [work] = await sql.query<{ discarded_at: Date | null }>(
    'SELECT discarded_at FROM works WHERE id = $1 AND tenant_id = $2',
    [workId, tenantId],
  );
  if (!work) throw new HttpError(404, 'not_found');
  if (work.discarded_at) throw new HttpError(409, 'work_discarded');
  const now = new Date();
  const row: RequestRow = {
    id: newId(),
    work_id: workId,
    status: 'pending',
    title: body.title.trim(),
    message: body.message ?? '',
    recipient_email: body.recipient.email.trim().toLowerCase(),
    recipient_first_name: (body.recipient.firstName ?? '').trim(),
    recipient_last_name: (body.recipient.lastName ?? '').trim(),
    answer: null,
    validation: null,
    cancel_reason: null,
    due_at: body.dueAt === undefined ? null : new Date(body.dueAt),
    created_at: now,
    updated_at: now,
    confirmed_at: null,
    validated_at: null,
    cancelled_at: null,
  };
  const request = presentRequest(row, actorRow(actor));
  const event = webhookEvent('request.created', tenantId, { request }, now);
  const search = requestSearchText({
    title: row.title,
    message: row.message,
    recipientEmail: row.recipient_email,
    recipientFirstName: row.recipient_first_name,
    recipientLastName: row.recipient_last_name,
  });
  const [inserted] = await sql.query<{ stopped: boolean }>(INSERT_REQUEST, [
    ...[row.id, workId, row.title, row.message, row.recipient_email, row.recipient_first_name],
    ...[row.recipient_last_name, row.due_at, actor.userId, tenantId, search, now],
    ...[now.toISOString().slice(0, 10), newId(), mailCaps.perRecipient, mailCaps.perTenant, mailCaps.perAddress],
    ...[mailCaps.perSender, EMAILS_STOPPED, newId(), event.id, event.body],
  ]);
  outbox.nudgeWebhooks();
  if (!inserted?.stopped) outbox.nudgeMail();
  return request;
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
  outbox: OutboxWorkers,
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
    // The action's event and its webhook event (the request as it is now), in one statement.
    const event = webhookEvent(requestActions[action].event, tenantId, { request: presentRequest(row, current) }, now);
    await tx.query(
      `WITH history AS (
         INSERT INTO request_events (id, request_id, action, from_status, to_status, actor_id, note, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8))
       INSERT INTO webhook_events (id, tenant_id, type, ordering_key, body, created_at)
       VALUES ($9, $10, $11, $2, $12, $8)`,
      [newId(), requestId, action, current.status, decision.to, actor.userId, note ?? null, now].concat([
        event.id,
        tenantId,
        requestActions[action].event,
        event.body,
      ]),
    );
    return row;
  });
  // Lost a race: the server reads again and decides; the benchmark never races, so a plain conflict will do.
  if (!updated) throw new HttpError(409, 'invalid_transition');
  outbox.nudgeWebhooks();
  return presentRequest(updated, current);
}
