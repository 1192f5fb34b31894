import type { RequestStatus } from '@works-api/server/domain/requests/state-machine';
import type { Actor } from './access';

// The rows the baseline reads, and the same JSON the server answers with for them.

export const iso = (date: Date | null): string | null => date?.toISOString() ?? null;
export const userRecord = (row: { first_name: string; last_name: string; email: string }) => ({
  firstName: row.first_name,
  lastName: row.last_name,
  email: row.email,
});

export interface WorkRow {
  id: string;
  slug: string;
  name: string;
  description: string;
  created_at: Date;
  updated_at: Date;
  discarded_at: Date | null;
}

export const presentWork = (work: WorkRow, owner: { first_name: string; last_name: string; email: string }) => ({
  id: work.id,
  slug: work.slug,
  name: work.name,
  description: work.description,
  createdAt: work.created_at.toISOString(),
  updatedAt: work.updated_at.toISOString(),
  discardedAt: iso(work.discarded_at),
  owner: userRecord(owner),
});

export const actorRow = (actor: Actor) => ({
  first_name: actor.firstName,
  last_name: actor.lastName,
  email: actor.email,
});
export const cursorOf = (id: string) => Buffer.from(`v1:${id}`).toString('base64url');

export interface RequestRow {
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

export const presentRequest = (r: RequestRow, owner: { first_name: string; last_name: string; email: string }) => ({
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
