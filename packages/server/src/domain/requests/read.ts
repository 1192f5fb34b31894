import type { Db } from '@works-api/prisma';
import {
  countRequestEvents,
  findRequestForMember,
  findRequestOfWork,
  isId,
  requestEventsPage,
} from '@works-api/prisma';
import { type Actor, authorize, type Permission, requirePermission } from '../access';
import { notFound } from '../errors';
import { type Page, type PageRequest, readPage } from '../paging';
import { ownerRecord, presentUserRecord } from '../users/present';
import { findWork } from '../works/works';
import { presentRequest, type RequestRef, type RequestRow } from './present';

/**
 * A request of a work of the tenant, with whether that work is discarded, in one query; or 404 for the work when
 * the work is what is missing, else for the request.
 */
export async function findRequest(db: Db, { tenantId, workId, requestId }: RequestRef) {
  const request = isId(requestId) && isId(workId) ? await findRequestOfWork(db, { tenantId, workId, requestId }) : null;
  if (request) return request;
  await findWork(db, tenantId, workId);
  throw notFound('request');
}

/** A request as `findRequest` reads it: with its owner and whether its work is discarded. */
export type FoundRequest = RequestRow & { work: { discardedAt: Date | null } };

/**
 * `authorize` and `findRequest` in one statement, one round trip instead of two: the caller's membership and the
 * request (with its owner and its work's discard), each on its own side of a join that always returns one row. The
 * answers are those of the two in turn: 404 for the tenant (not a member), 403 (role too low), then 404 for the work
 * or the request.
 */
export async function findRequestAs(db: Db, actor: Actor, permission: Permission, ref: RequestRef) {
  const { tenantId, workId, requestId } = ref;
  if (!isId(tenantId) || !isId(workId) || !isId(requestId)) {
    await authorize(db, actor, tenantId, permission);
    return findRequest(db, ref);
  }
  const row = await findRequestForMember(db, { tenantId, userId: actor.userId, requestId, workId });
  if (!row?.callerRole) throw notFound('tenant');
  requirePermission({ tenantId, role: row.callerRole }, permission);
  if (row.id === null) {
    await findWork(db, tenantId, workId);
    throw notFound('request');
  }
  const { callerRole: _role, ownerFirstName: _f, ownerLastName: _l, ownerEmail: _e, workDiscardedAt, ...request } = row;
  return {
    ...request,
    owner: ownerRecord(row),
    work: { discardedAt: workDiscardedAt },
  } as FoundRequest;
}

export async function getRequest(db: Db, actor: Actor, ref: RequestRef) {
  return presentRequest(await findRequestAs(db, actor, 'readTenant', ref));
}

export async function listRequestEvents(db: Db, actor: Actor, ref: RequestRef, pageRequest: PageRequest) {
  const request = await findRequestAs(db, actor, 'readTenant', ref);
  // The recipient has no user: their events show the request's recipient.
  const recipient = {
    email: request.recipientEmail,
    firstName: request.recipientFirstName,
    lastName: request.recipientLastName,
  };
  return readPage(pageRequest, {
    rows: (page: Page) => requestEventsPage(db, ref.requestId, page),
    // No kept count: the state machine bounds a request's events (at most two transitions, then a final state),
    // so this count reads a handful of index entries.
    totalCount: () => countRequestEvents(db, ref.requestId),
    present: (event) => ({
      id: event.id,
      action: event.action,
      fromStatus: event.fromStatus,
      toStatus: event.toStatus,
      actor: presentUserRecord(event.actor ?? recipient),
      actorType: event.actorType,
      throughDevMailbox: event.throughDevMailbox,
      note: event.note,
      createdAt: event.createdAt.toISOString(),
    }),
  });
}
