import { memberMaySql } from './parts';
import { sendStatement, type Queryable } from './send';

/**
 * Bulk send (issue 41): the statement that creates a batch of requests in one work, set-based. The items travel as
 * ONE json parameter read by `json_to_recordset` (the same text on PGlite and PostgreSQL, whatever the batch's
 * size, and no array type the driver must know), so a batch of 1,000 is one statement and one round trip, never
 * 1,000. What it shares with a single create (statements/requests.ts `insertRequest`, packages/server/src/domain/requests/create.ts):
 *
 * - the work read kept, in the tenant and FOR SHARE, with the caller's membership as a condition (parts.ts `memberMaySql`):
 *   nothing is written for a caller who may not send, and a discard cannot slip in between (share locks do not
 *   conflict with each other, so single creates in the same work never wait for a batch);
 * - the mail caps: `take_mail_allowances`, the batch's `take_mail_allowance` (each address's row and the tenant's
 *   day counted once for all of the batch's emails, not once per email: that grew with the square of the batch), in
 *   the same statement: over a cap it raises and the whole statement is undone (429, nothing created); an address
 *   that stopped the tenant's emails gets its request without an email (`emails_stopped`);
 * - the work's count: one upsert of this session's counter slot by the number of rows (counter_slot(), see
 *   prisma/src/counts.ts), in the same statement as the rows, so `totalCount` is exact right after;
 * - one mail_outbox row per request that takes an email, one webhook_events row (`request.created`, the events feed
 *   and the webhooks) per request, their ids time-ordered in item order.
 *
 * Locks: the work's row FOR SHARE, this session's work_counts slot, each address's mail_recipients row and the
 * tenant's 16 mail-day slots (a single create takes one), for the statement's duration only (or its transaction's,
 * when an Idempotency-Key's result is recorded after it, see the domain).
 */

/** One item as the statement reads it: everything worked out by the caller, ids included. */
export interface RequestBatchRow {
  ord: number;
  id: string;
  title: string;
  message: string;
  email: string;
  firstName: string;
  lastName: string;
  /** ISO 8601, or null. */
  dueAt: string | null;
  search: string;
  /** The new mail_recipients row's id, should the address have none yet. */
  recipientId: string;
  mailId: string;
  eventId: string;
  /** The `request.created` event's body for a request that takes an email, and for one whose emails are stopped. */
  body: string;
  stoppedBody: string;
}

export interface InsertRequestBatchParams {
  tenantId: string;
  workId: string;
  ownerId: string;
  /** ISO 8601: every row's createdAt and updatedAt. */
  now: string;
  /** Why a stopped address's request has no email (its email_failure). */
  emailsStoppedFailure: string;
  items: readonly RequestBatchRow[];
}

/** What `insertRequestBatch` is composed of besides the rows: the caller's access. */
export interface RequestBatchParts {
  /** The roles that may send a request: the caller must hold one in the tenant (parts.ts `memberMaySql`). */
  allowedRoles: readonly string[];
}

/** The daily email caps the batch's emails count against (take_mail_allowances). */
export interface RequestBatchCaps {
  /** The UTC day the emails count in (YYYY-MM-DD). */
  day: string;
  emailsPerRecipientPerDay: number;
  emailsPerTenantPerDay: number;
  /** Across the service, per canonical address (issue 42). */
  emailsPerAddressPerDay: number;
  /** The sending user's, across their tenants (issue 42): the batch's caller sends its emails. */
  emailsPerSenderPerDay: number;
}

export interface CreatedBatchRow {
  id: string;
  stopped: boolean;
}

const ITEM_COLUMNS = `ord int, id uuid, title text, message text, email text, first_name text, last_name text,
  due_at timestamptz, search text, recipient_id uuid, mail_id uuid, event_id uuid, body text, stopped_body text`;

const insertRequestBatchSql = (parts: RequestBatchParts) => `
  WITH work AS (
    SELECT w.id FROM works w
    WHERE w.id = :workId::uuid AND w.tenant_id = :tenantId::uuid AND w.discarded_at IS NULL AND ${memberMaySql(parts.allowedRoles, ':tenantId', ':ownerId')}
    FOR SHARE),
  items AS MATERIALIZED (
    SELECT * FROM json_to_recordset(:items::json) AS i(${ITEM_COLUMNS})),
  -- Every email's place under the daily caps at once (migration request_batch_mail_allowances), only when the work
  -- is there for this caller (nothing counted otherwise): per item, whether its address stopped the tenant's emails.
  allowance AS MATERIALIZED (
    SELECT take_mail_allowances(:tenantId::uuid, :ownerId::uuid, array_agg(i.email ORDER BY i.ord), :day::date,
                                array_agg(i.recipient_id ORDER BY i.ord), :emailsPerRecipientPerDay::int,
                                :emailsPerTenantPerDay::int, :emailsPerAddressPerDay::int,
                                :emailsPerSenderPerDay::int) AS stopped
    FROM items i
    WHERE EXISTS (SELECT FROM work)
    HAVING count(*) > 0),
  created AS (
    INSERT INTO requests (id, work_id, title, message, recipient_email, recipient_first_name, recipient_last_name,
                          due_at, owner_id, created_at, updated_at, email_status, email_failure, emails_stopped,
                          tenant_id, search)
    SELECT i.id, :workId::uuid, i.title, i.message, i.email, i.first_name, i.last_name, i.due_at, :ownerId::uuid,
           :now::timestamptz, :now::timestamptz,
           CASE WHEN a.stopped[i.ord + 1] THEN 'dropped' ELSE 'queued' END::mail_status,
           CASE WHEN a.stopped[i.ord + 1] THEN :emailsStoppedFailure END, a.stopped[i.ord + 1], :tenantId::uuid,
           i.search
    FROM items i, allowance a
    ORDER BY i.ord
    RETURNING id, emails_stopped),
  counted AS (
    INSERT INTO work_counts AS c (work_id, slot, pending)
    SELECT :workId::uuid, counter_slot(), count(*) FROM created HAVING count(*) > 0
    ON CONFLICT (work_id, slot) DO UPDATE SET pending = c.pending + EXCLUDED.pending),
  mailed AS (
    INSERT INTO mail_outbox (id, kind, tenant_id, request_id, invitation_id, next_attempt_at, created_at)
    SELECT i.mail_id, 'request', :tenantId::uuid, c.id, NULL, :now::timestamptz, :now::timestamptz
    FROM created c JOIN items i ON i.id = c.id
    WHERE NOT c.emails_stopped),
  evented AS (
    INSERT INTO webhook_events (id, tenant_id, type, ordering_key, endpoint_id, body, created_at)
    SELECT i.event_id, :tenantId::uuid, 'request.created', i.id, NULL,
           CASE WHEN c.emails_stopped THEN i.stopped_body ELSE i.body END, :now::timestamptz
    FROM created c JOIN items i ON i.id = c.id
    ORDER BY i.ord)
  SELECT c.id, c.emails_stopped AS stopped FROM created c`;

/**
 * Creates a batch's requests, their emails, events and count in one statement; the rows created (none when the
 * work is missing, discarded or not the caller's to send in). Throws what `take_mail_allowance` raises over a cap.
 */
export async function insertRequestBatch(
  db: Queryable,
  parts: RequestBatchParts,
  caps: RequestBatchCaps,
  params: InsertRequestBatchParams,
): Promise<CreatedBatchRow[]> {
  const items = JSON.stringify(
    params.items.map((item) => ({
      ord: item.ord,
      id: item.id,
      title: item.title,
      message: item.message,
      email: item.email,
      first_name: item.firstName,
      last_name: item.lastName,
      due_at: item.dueAt,
      search: item.search,
      recipient_id: item.recipientId,
      mail_id: item.mailId,
      event_id: item.eventId,
      body: item.body,
      stopped_body: item.stoppedBody,
    })),
  );
  return sendStatement<CreatedBatchRow>(db, insertRequestBatchSql(parts), {
    tenantId: params.tenantId,
    workId: params.workId,
    ownerId: params.ownerId,
    now: params.now,
    emailsStoppedFailure: params.emailsStoppedFailure,
    items,
    ...caps,
  });
}
