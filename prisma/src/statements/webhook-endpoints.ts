import type { Db } from '../handle';
import type { Prisma, WebhookEndpoint } from '../generated/client';
import { newestFirst, type PageWindow } from './pages';
import type { OutboxEventRow } from './parts';

/** A tenant's webhook endpoints and their deliveries, as the endpoint operations read and change them. */

/** What a delivery is read with: its event's body (what is signed and sent). */
const withEvent = { event: { select: { body: true } } } as const;

/** A delivery as read with its event's body. */
export type DeliveryRow = Prisma.WebhookDeliveryGetPayload<{ include: typeof withEvent }>;

/** An endpoint of the tenant (null: none). */
export function findEndpointOfTenant(db: Db, tenantId: string, endpointId: string): Promise<WebhookEndpoint | null> {
  return db.prisma.webhookEndpoint.findFirst({ where: { id: endpointId, tenantId } });
}

/** A page of the tenant's endpoints, newest first. */
export function endpointsPage(db: Db, tenantId: string, page: PageWindow): Promise<WebhookEndpoint[]> {
  const { where, ...window } = newestFirst(page, 'id');
  return db.prisma.webhookEndpoint.findMany({ where: { tenantId, ...where }, ...window });
}

/** A new endpoint's columns (its secret sealed). */
export type NewEndpoint = Pick<
  WebhookEndpoint,
  'id' | 'tenantId' | 'url' | 'description' | 'eventTypes' | 'enabled' | 'disabledReason' | 'secret'
>;

/** A new endpoint (inside the transaction that counted the tenant's endpoints under its lock: limits.ts). */
export function insertEndpoint(tx: Prisma.TransactionClient, data: NewEndpoint): Promise<WebhookEndpoint> {
  return tx.webhookEndpoint.create({ data });
}

/** What an endpoint's update may change; `updatedAt` always. */
export type EndpointChanges = Partial<
  Pick<
    WebhookEndpoint,
    | 'url'
    | 'description'
    | 'eventTypes'
    | 'enabled'
    | 'disabledReason'
    | 'failingSince'
    | 'secret'
    | 'previousSecret'
    | 'previousSecretExpiresAt'
  >
> & { updatedAt: Date };

/** Changes an endpoint; the endpoint as it is then. */
export function updateEndpoint(db: Db, endpointId: string, data: EndpointChanges): Promise<WebhookEndpoint> {
  return db.prisma.webhookEndpoint.update({ where: { id: endpointId }, data });
}

/** Deletes an endpoint of the tenant; whether there was one. */
export async function deleteEndpointOfTenant(db: Db, tenantId: string, endpointId: string): Promise<boolean> {
  const { count } = await db.prisma.webhookEndpoint.deleteMany({ where: { id: endpointId, tenantId } });
  return count > 0;
}

/**
 * An event for one endpoint alone and its delivery, written together (one batch transaction): the event already
 * fanned out, the delivery due at `now`. The delivery with its event's body.
 */
export async function insertEventWithDelivery(
  db: Db,
  event: OutboxEventRow,
  delivery: { id: string; endpointId: string; tenantId: string; now: Date },
): Promise<DeliveryRow> {
  const [, created] = await db.prisma.$transaction([
    db.prisma.webhookEvent.create({ data: { ...event, fannedOutAt: delivery.now } }),
    db.prisma.webhookDelivery.create({
      data: {
        id: delivery.id,
        endpointId: delivery.endpointId,
        tenantId: delivery.tenantId,
        eventId: event.id,
        nextAttemptAt: delivery.now,
        createdAt: delivery.now,
      },
      include: withEvent,
    }),
  ]);
  return created;
}

/** A page of an endpoint's deliveries, newest first, each with its event's body. */
export function deliveriesPage(db: Db, endpointId: string, page: PageWindow): Promise<DeliveryRow[]> {
  const { where, ...window } = newestFirst(page, 'id');
  return db.prisma.webhookDelivery.findMany({ where: { endpointId, ...where }, include: withEvent, ...window });
}

/** Makes an endpoint's delivery pending and due now, whatever its state; whether there was one. */
export async function markDeliveryForRetry(
  db: Db,
  params: { endpointId: string; deliveryId: string; now: Date },
): Promise<boolean> {
  const { count } = await db.prisma.webhookDelivery.updateMany({
    where: { id: params.deliveryId, endpointId: params.endpointId },
    data: { status: 'pending', nextAttemptAt: params.now },
  });
  return count > 0;
}

/** A delivery that exists, with its event's body. */
export function findDelivery(db: Db, deliveryId: string): Promise<DeliveryRow> {
  return db.prisma.webhookDelivery.findUniqueOrThrow({ where: { id: deliveryId }, include: withEvent });
}
