import { futureDateTime } from '../dates';
import type { Db } from '@works-api/prisma';
import { type HeldKey, insertRequest, isId, KeyHoldLost, newId } from '@works-api/prisma';
import { type Actor, authorize, rolesAllowed } from '../access';
import { notFound } from '../errors';
import type { Schemas } from '../schemas';
import { normalizeEmail, normalizeName } from '../users/present';
import { outboxBody, outboxRow } from '../../webhooks/events';
import { findWork, workDiscarded } from '../works/works';
import { requestSearchText } from '../search/fold';
import { DEFAULT_LIMITS } from '../limits';
import { allowanceParams, EMAILS_STOPPED, type MailCaps, mailCapRefusal } from '../../mail/caps';
import { presentRequest, type RequestRow } from './present';
import { recordedWith } from '../idempotent-results';

/**
 * Sends a request: one statement, so one round trip and atomic. The work is read kept and in the tenant, locked FOR
 * SHARE: a concurrent discard that commits first makes it find nothing (PostgreSQL re-checks the locked row), and
 * one that comes later waits for the insert, so no request lands in a work after its discard. The email takes its
 * place under the tenant's daily caps in the same statement (over one, the statement aborts: 429, nothing created);
 * to an address that stopped the tenant's emails, the request is created without one (`emailsStopped`). The
 * caller's membership is a condition of the statement; under an Idempotency-Key (`heldKey`), the request is the
 * key's result, recorded in it too (statements/requests.ts `insertRequest`).
 */
export async function createRequest(
  db: Db,
  actor: Actor,
  tenantId: string,
  workId: string,
  input: Schemas['CreateRequestBody'],
  caps: MailCaps = DEFAULT_LIMITS,
  heldKey?: HeldKey,
) {
  const now = new Date();
  const dueAt = input.dueAt === undefined ? null : futureDateTime(input.dueAt, '/body/dueAt', now);
  if (!isId(tenantId)) throw notFound('tenant');
  if (!isId(workId)) {
    await authorize(db, actor, tenantId, 'sendRequest');
    throw notFound('work');
  }
  // The row as the INSERT below writes it, defaults included, for an address that takes emails.
  const request = {
    id: newId(),
    workId,
    status: 'pending',
    title: normalizeName(input.title),
    message: input.message ?? '',
    recipientEmail: normalizeEmail(input.recipient.email),
    recipientFirstName: normalizeName(input.recipient.firstName ?? ''),
    recipientLastName: normalizeName(input.recipient.lastName ?? ''),
    answer: null,
    validation: null,
    cancelReason: null,
    dueAt,
    createdAt: now,
    updatedAt: now,
    confirmedAt: null,
    validatedAt: null,
    cancelledAt: null,
    emailStatus: 'queued',
    emailSentAt: null,
    emailFailure: null,
    remindedAt: null,
    linkGeneration: 0,
    resendCount: 0,
    lastResentAt: null,
    emailsStopped: false,
    confirmedThroughDevMailbox: false,
    ownerId: actor.userId,
    tenantId,
    search: '',
    // The owner is the caller, whom authentication already read (see createWork).
    owner: actor.user,
  } satisfies RequestRow;
  request.search = requestSearchText(request);
  const taking = presentRequest(request);
  // And as it is written when the address stopped the tenant's emails (emailStatus `dropped` with EMAILS_STOPPED,
  // emailsStopped): the statement picks one by the allowance. Presented once, the other one its two fields changed.
  const presented = {
    taking,
    stopped: {
      ...taking,
      emailDelivery: { status: 'dropped', lastSentAt: null, failure: EMAILS_STOPPED },
      emailsStopped: true,
    } satisfies Schemas['Request'],
  };
  const event = outboxRow('request.created', tenantId, { request: presented.taking }, now, { orderingKey: request.id });
  const stoppedBody = outboxBody(event as typeof event & { type: 'request.created' }, { request: presented.stopped });
  const key = recordedWith(db, heldKey, presented.taking, { when: 'emails_stopped', result: presented.stopped });
  let inserted: Array<{ stopped: boolean }>;
  try {
    inserted = await insertRequest(
      db,
      {
        ...{ requestId: request.id, workId, title: request.title, message: request.message },
        ...{ recipientEmail: request.recipientEmail, recipientFirstName: request.recipientFirstName },
        ...{ recipientLastName: request.recipientLastName, dueAt: request.dueAt?.toISOString() ?? null },
        ...{ ownerId: actor.userId, now: now.toISOString(), tenantId, mailId: newId() },
        ...{ stoppedBody, emailsStoppedFailure: EMAILS_STOPPED, search: request.search },
      },
      {
        allowedRoles: rolesAllowed('sendRequest'),
        outbox: event,
        allowance: allowanceParams(tenantId, actor.userId, request.recipientEmail, caps, now),
        key,
      },
    );
  } catch (error) {
    throw mailCapRefusal(error, caps, now) ?? error;
  }
  if (inserted.length === 0) {
    // Nothing inserted: the caller may not (404, 403), the work is missing (404) or discarded (409), or the key's
    // guard stopped it.
    await authorize(db, actor, tenantId, 'sendRequest');
    const work = await findWork(db, tenantId, workId);
    throw heldKey && !work.discardedAt ? new KeyHoldLost() : workDiscarded();
  }
  db.outbox.webhooks.signal();
  if (inserted[0]!.stopped) return presented.stopped;
  db.outbox.mail.signal();
  return presented.taking;
}
