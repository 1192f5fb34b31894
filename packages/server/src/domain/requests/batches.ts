import type { Db } from '@works-api/prisma';
import { insertRequestBatch, inTransaction, type HeldKey, isId, newId, type RequestBatchRow } from '@works-api/prisma';
import { type Actor, authorize, rolesAllowed } from '../access';
import { parseDateTime } from '../dates';
import { type FieldError, notFound, ProblemError } from '../errors';
import { DEFAULT_LIMITS } from '../limits';
import { EMAILS_STOPPED, type MailCaps, mailCapRefusal, utcDay } from '../../mail/caps';
import type { Schemas } from '../schemas';
import { requestSearchText } from '../search/fold';
import { textViolation } from '../text';
import { normalizeEmail, normalizeName } from '../users/present';
import { aboutField, ruleMessages } from '../validation-messages';
import { outboxBody, outboxRow } from '../../webhooks/events';
import { findWork, workDiscarded } from '../works/works';
import { presentRequest } from './present';
import { recordIn } from '../idempotent-results';

/** The most items a batch takes (the contract's maxItems). */
export const MAX_BATCH_ITEMS = 1000;

type BatchBody = Schemas['CreateRequestBatchBody'];
export type RequestBatch = Schemas['RequestBatch'];

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Every rule of a batch the contract's schema cannot state, for every item: a title (its own or the defaults'),
 * the text rules the validator leaves to the server (domain/text.ts: trimmed lengths, unpaired surrogates) and a
 * due date in the future. Reads any JSON at all (only the values of the right type are judged), so that the
 * validator's findings on a bad batch can be completed with these: a 400 names every bad item, not the first.
 */
export function batchFindings(body: unknown, now: Date): FieldError[] {
  if (!isObject(body)) return [];
  const errors: FieldError[] = [];
  const add = (path: string, rule: string) => errors.push({ path, message: aboutField(path, rule) });
  const text = (schema: 'Name' | 'PersonName' | 'LongText', value: unknown, path: string) => {
    const rule = typeof value === 'string' ? textViolation(schema, value) : undefined;
    if (rule) add(path, rule);
  };
  const due = (value: unknown, path: string) => {
    if (typeof value !== 'string') return;
    const instant = parseDateTime(value);
    if (instant && instant <= now) add(path, ruleMessages.future);
  };
  const defaults = isObject(body.defaults) ? body.defaults : {};
  text('Name', defaults.title, '/body/defaults/title');
  text('LongText', defaults.message, '/body/defaults/message');
  due(defaults.dueAt, '/body/defaults/dueAt');
  if (!Array.isArray(body.items)) return errors;
  body.items.forEach((item: unknown, index) => {
    if (!isObject(item)) return;
    const at = `/body/items/${index}`;
    if (item.title === undefined && defaults.title === undefined)
      add(`${at}/title`, `${ruleMessages.required} (in the item, or for every item in defaults.title)`);
    text('Name', item.title, `${at}/title`);
    text('LongText', item.message, `${at}/message`);
    due(item.dueAt, `${at}/dueAt`);
    if (isObject(item.recipient)) {
      text('PersonName', item.recipient.firstName, `${at}/recipient/firstName`);
      text('PersonName', item.recipient.lastName, `${at}/recipient/lastName`);
    }
  });
  return errors;
}

/** `/body/items/12/title` → [12, '/title']: errors sorted by item, then as found. */
const itemIndex = (path: string) => Number(/^\/body\/items\/(\d+)/.exec(path)?.[1] ?? -1);

/** The most errors a 400 lists per item, and for the body outside `items` (the contract's BatchFieldErrors). */
export const MAX_ERRORS_PER_ITEM = 10;

/**
 * The validator's findings and `batchFindings`, each path once, in item order (the body's outside `items` first),
 * up to MAX_ERRORS_PER_ITEM per item: every bad item named, and an item with hundreds of unknown properties cannot
 * make the answer unbounded. Items past MAX_BATCH_ITEMS are left out: `/body/items` itself says there are too many.
 */
export function mergeBatchFindings(found: FieldError[], more: FieldError[]): FieldError[] {
  const seen = new Set(found.map((error) => error.path));
  const perItem = new Map<number, number>();
  return [...found, ...more.filter((error) => !seen.has(error.path))]
    .map((error, order) => ({ error, order, item: itemIndex(error.path) }))
    .filter(({ item }) => item < MAX_BATCH_ITEMS)
    .sort((a, b) => a.item - b.item || a.order - b.order)
    .filter(({ item }) => {
      const listed = perItem.get(item) ?? 0;
      perItem.set(item, listed + 1);
      return listed < MAX_ERRORS_PER_ITEM;
    })
    .map(({ error }) => error);
}

/** A batch's 400: its errors as `mergeBatchFindings` lists them, every bad item named (not the contract's usual 100). */
export const invalidBatch = (errors: FieldError[]): ProblemError =>
  new ProblemError(
    'validation_failed',
    `${new Set(errors.map((error) => itemIndex(error.path))).size === 1 && itemIndex(errors[0]!.path) >= 0 ? 'An item' : 'The batch'} breaks the contract: nothing was created; errors names every bad item by its index.`,
    { errors },
  );

/**
 * Bulk send: up to 1,000 requests in one work, all or nothing (issue 41). Every item is checked first (400 naming
 * every bad one); then ONE statement (prisma/src/statements/request-batches.ts) creates them all with their
 * emails, events and count, each email under the daily caps in item order (over one: 429 naming the cap, nothing
 * created). Under an Idempotency-Key, the key's result (the batch, which says which addresses had stopped emails:
 * only the statement knows) is recorded after it in the same transaction, so a crash leaves both or neither.
 */
export async function createRequestBatch(
  db: Db,
  actor: Actor,
  tenantId: string,
  workId: string,
  input: BatchBody,
  caps: MailCaps = DEFAULT_LIMITS,
  heldKey?: HeldKey,
): Promise<RequestBatch> {
  const now = new Date();
  const errors = batchFindings(input, now);
  if (errors.length > 0) throw invalidBatch(mergeBatchFindings([], errors));
  if (!isId(tenantId)) throw notFound('tenant');
  if (!isId(workId)) {
    await authorize(db, actor, tenantId, 'sendRequest');
    throw notFound('work');
  }
  const defaults = input.defaults ?? {};
  const defaultDue = defaults.dueAt === undefined ? null : parseDateTime(defaults.dueAt)!;
  const planned = input.items.map((item, ord) => {
    const dueText = item.dueAt ?? undefined;
    const request = {
      id: newId(),
      workId,
      status: 'pending' as const,
      title: normalizeName((item.title ?? defaults.title)!),
      message: item.message ?? defaults.message ?? '',
      recipientEmail: normalizeEmail(item.recipient.email),
      recipientFirstName: normalizeName(item.recipient.firstName ?? ''),
      recipientLastName: normalizeName(item.recipient.lastName ?? ''),
      answer: null,
      validation: null,
      cancelReason: null,
      dueAt: dueText === undefined ? defaultDue : parseDateTime(dueText)!,
      createdAt: now,
      updatedAt: now,
      confirmedAt: null,
      validatedAt: null,
      cancelledAt: null,
      emailStatus: 'queued' as const,
      emailSentAt: null,
      emailFailure: null,
      emailsStopped: false,
      confirmedThroughDevMailbox: false,
      owner: actor.user,
    };
    const taking = presentRequest(request);
    const stopped = {
      ...taking,
      emailDelivery: { status: 'dropped', lastSentAt: null, failure: EMAILS_STOPPED },
      emailsStopped: true,
    } satisfies Schemas['Request'];
    const event = outboxRow('request.created', tenantId, { request: taking }, now, { orderingKey: request.id });
    const row: RequestBatchRow = {
      ord,
      id: request.id,
      title: request.title,
      message: request.message,
      email: request.recipientEmail,
      firstName: request.recipientFirstName,
      lastName: request.recipientLastName,
      dueAt: request.dueAt?.toISOString() ?? null,
      search: requestSearchText(request),
      recipientId: newId(),
      mailId: newId(),
      eventId: event.id,
      body: event.body,
      stoppedBody: outboxBody(event as typeof event & { type: 'request.created' }, { request: stopped }),
    };
    return { row, taking, stopped };
  });
  const parts = { allowedRoles: rolesAllowed('sendRequest') };
  const allowance = {
    day: utcDay(now),
    emailsPerRecipientPerDay: caps.emailsPerRecipientPerDay,
    emailsPerTenantPerDay: caps.emailsPerTenantPerDay,
    emailsPerAddressPerDay: caps.emailsPerAddressPerDay,
    emailsPerSenderPerDay: caps.emailsPerSenderPerDay,
  };
  const params = {
    tenantId,
    workId,
    ownerId: actor.userId,
    now: now.toISOString(),
    emailsStoppedFailure: EMAILS_STOPPED,
    items: planned.map((item) => item.row),
  };
  const answer = (rows: Array<{ id: string; stopped: boolean }>): RequestBatch => {
    const stopped = new Set(rows.filter((row) => row.stopped).map((row) => row.id));
    return {
      count: planned.length,
      requests: planned.map((item) => (stopped.has(item.row.id) ? item.stopped : item.taking)),
    };
  };
  let batch: RequestBatch | undefined;
  try {
    if (heldKey) {
      batch = await inTransaction(
        db,
        async (tx) => {
          const rows = await insertRequestBatch(tx, parts, allowance, params);
          if (rows.length === 0) return undefined;
          const created = answer(rows);
          await recordIn(db, tx, heldKey, created);
          return created;
        },
        { timeout: 30_000 },
      );
    } else {
      const rows = await insertRequestBatch(db, parts, allowance, params);
      if (rows.length > 0) batch = answer(rows);
    }
  } catch (error) {
    throw (
      batchCapRefusal(
        error,
        caps,
        now,
        planned.map((item) => item.row.email),
      ) ?? error
    );
  }
  if (!batch) {
    // Nothing inserted: the caller may not (404, 403), the work is missing (404) or discarded (409).
    await authorize(db, actor, tenantId, 'sendRequest');
    await findWork(db, tenantId, workId);
    throw workDiscarded();
  }
  db.outbox.webhooks.signal();
  if (batch.requests.some((request) => !request.emailsStopped)) db.outbox.mail.signal();
  return batch;
}

/** A cap's 429 (mail/caps.ts), saying that it stopped the whole batch. */
function batchCapRefusal(error: unknown, caps: MailCaps, now: Date, emails: string[]): ProblemError | undefined {
  const refusal = mailCapRefusal(error, caps, now);
  if (!refusal) return undefined;
  // take_mail_allowances names the first address over a per-address cap, in item order (its DETAIL).
  const perAddress = refusal.code === 'recipient_email_limit_reached' || refusal.code === 'address_email_limit_reached';
  const address = perAddress ? detailOf(error)?.toLowerCase() : undefined;
  const named = address && emails.includes(address) ? ` (${address}, item ${emails.indexOf(address)})` : '';
  const detail = `${refusal.detail}${named} The batch of ${emails.length} was refused whole: nothing was created.`;
  return new ProblemError(refusal.code, detail, refusal.extensions, refusal.retryAfterSeconds);
}

/** The DETAIL of a database error, wherever the driver or Prisma put it (as mail/caps.ts finds its SQLSTATE). */
function detailOf(error: unknown, depth = 0): string | undefined {
  if (typeof error !== 'object' || error === null || depth > 5) return undefined;
  const { detail, cause, meta } = error as {
    detail?: unknown;
    cause?: unknown;
    meta?: { driverAdapterError?: unknown };
  };
  if (typeof detail === 'string') return detail;
  return detailOf(cause, depth + 1) ?? detailOf(meta?.driverAdapterError, depth + 1);
}
