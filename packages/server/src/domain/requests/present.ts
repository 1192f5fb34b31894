import type { RequestRow, RequestShownColumns } from '@works-api/prisma';
import type { Schemas } from '../schemas';
import { presentUserRecord } from '../users/present';

/** How a request is presented (the contract's Request), and the rows it is presented from. */

/** A request as read with its owner (the database package's); also what a request written here is presented from. */
export type { RequestRow } from '@works-api/prisma';

const iso = (date: Date | null): string | null => date?.toISOString() ?? null;

/** What `presentRequest` reads of a request: its shown columns and its owner. */
export type PresentedRequestRow = RequestShownColumns & Pick<RequestRow, 'owner'>;

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
