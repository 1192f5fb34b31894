import type { Prisma } from '@works-api/prisma/client';
import type { Schemas } from '../schemas';
import { presentUserRecord, userRecord } from '../users/present';

/** How a request is presented (the contract's Request), and the rows it is presented from. */

export const withOwner = { owner: userRecord } as const;

/** A request as read with its owner; also what a request written in this module is presented from. */
// Without the search prefixes, which no read returns (see the client's `omit`).
export type RequestRow = Omit<Prisma.RequestGetPayload<{ include: typeof withOwner }>, 'searchPrefixes'>;

const iso = (date: Date | null): string | null => date?.toISOString() ?? null;

/** What `presentRequest` reads of a request. */
export type PresentedRequestRow = Pick<
  RequestRow,
  | 'id'
  | 'workId'
  | 'status'
  | 'title'
  | 'message'
  | 'recipientEmail'
  | 'recipientFirstName'
  | 'recipientLastName'
  | 'answer'
  | 'validation'
  | 'cancelReason'
  | 'dueAt'
  | 'owner'
  | 'createdAt'
  | 'updatedAt'
  | 'confirmedAt'
  | 'validatedAt'
  | 'cancelledAt'
  | 'emailStatus'
  | 'emailSentAt'
  | 'emailFailure'
  | 'emailsStopped'
  | 'confirmedThroughDevMailbox'
>;

// (Partial<RequestRow>: a caller may pass a whole row, and name fields this does not read.)
export const presentRequest = (request: PresentedRequestRow & Partial<RequestRow>): Schemas['Request'] => ({
  id: request.id,
  workId: request.workId,
  status: request.status,
  title: request.title,
  message: request.message,
  recipient: {
    email: request.recipientEmail,
    firstName: request.recipientFirstName,
    lastName: request.recipientLastName,
  },
  answer: request.answer,
  validation: request.validation,
  cancelReason: request.cancelReason,
  dueAt: iso(request.dueAt),
  owner: presentUserRecord(request.owner),
  createdAt: request.createdAt.toISOString(),
  updatedAt: request.updatedAt.toISOString(),
  confirmedAt: iso(request.confirmedAt),
  validatedAt: iso(request.validatedAt),
  cancelledAt: iso(request.cancelledAt),
  emailDelivery: presentEmailDelivery(request),
  emailsStopped: request.emailsStopped,
  confirmedThroughDevMailbox: request.confirmedThroughDevMailbox,
});

function presentEmailDelivery(request: PresentedRequestRow): Schemas['EmailDelivery'] | null {
  if (request.emailStatus === null) return null;
  return {
    status: request.emailStatus,
    lastSentAt: iso(request.emailSentAt),
    failure: request.emailFailure,
  };
}

export interface RequestRef {
  tenantId: string;
  workId: string;
  requestId: string;
}
