import type { WebhookEvent as WebhookEventRow } from '@works-api/prisma/client';
import { newId } from '@works-api/prisma';
import type { Schemas } from '../domain/schemas';

/** Every event type, as the contract's WebhookEventType lists them. */
export type WebhookEventType = Schemas['WebhookEventType'];
export type WebhookEvent = Schemas['WebhookEvent'];

/** Delivery history (events and their deliveries, once none is pending) is kept this long. */
export const HISTORY_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;

/** The smallest UUIDv7 of a time: ids below it were made before it (the event ids' primary key finds them). */
export const firstIdAt = (at: Date): string => {
  const hex = at.getTime().toString(16).padStart(12, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-7000-8000-000000000000`;
};
type EventOf<T extends WebhookEventType> = Extract<WebhookEvent, { type: T }>;

/**
 * One outbox row: the event, its exact body (what is signed and sent), and what routes and orders it: `orderingKey`
 * is the request an event is about (its events reach each endpoint in order), `endpointId` is set only for
 * webhook_endpoint.test (the one endpoint it goes to). Its type is one of the contract's (the column is text).
 */
export type OutboxRow = Pick<
  WebhookEventRow,
  'id' | 'tenantId' | 'orderingKey' | 'endpointId' | 'body' | 'createdAt'
> & {
  type: WebhookEventType;
};

/** Builds the outbox row of an event; `createdAt` is the change's own time, so the event says when it happened. */
export function outboxRow<T extends WebhookEventType>(
  type: T,
  tenantId: string,
  data: EventOf<T>['data'],
  createdAt: Date,
  route: { orderingKey?: string; endpointId?: string } = {},
): OutboxRow {
  const row = {
    id: newId(),
    tenantId,
    type,
    orderingKey: route.orderingKey ?? null,
    endpointId: route.endpointId ?? null,
  };
  return { ...row, body: outboxBody({ ...row, createdAt }, data), createdAt };
}

/**
 * The body of the outbox row `row` with other `data` (of the same event type): for a statement that picks one of
 * two outcomes itself, with no second row made, nor the first body parsed again.
 */
export function outboxBody<T extends WebhookEventType>(
  row: Pick<OutboxRow, 'id' | 'tenantId' | 'createdAt'> & { type: T },
  data: EventOf<T>['data'],
): string {
  return JSON.stringify({
    id: row.id,
    type: row.type,
    createdAt: row.createdAt.toISOString(),
    tenantId: row.tenantId,
    data,
  });
}
