import type { Db, DeliveryRow } from '@works-api/prisma';
import {
  countDeliveriesOf,
  countWebhookEndpointsOf,
  deleteEndpointOfTenant,
  deliveriesPage,
  endpointsPage,
  findDelivery,
  findEndpointOfTenant,
  insertEndpoint,
  insertEventWithDelivery,
  markDeliveryForRetry,
  updateEndpoint,
} from '@works-api/prisma';
import type { WebhookEndpoint } from '@works-api/prisma/client';
import { isId, newId } from '@works-api/prisma';
import type { HeldKey } from '@works-api/prisma';
import { secretBoxOf, webhookSecretSlot } from '@works-api/prisma';
import { type Actor, authorize } from '../domain/access';
import { notFound, ProblemError } from '../domain/errors';
import { createWithinCap, DEFAULT_LIMITS, webhookEndpointLimitReached } from '../domain/limits';
import { type Page, type PageRequest, readPage } from '../domain/paging';
import type { Schemas } from '../domain/schemas';
import { aboutField, ruleMessages } from '../domain/validation-messages';
import { type Lookup, resolveDeliveryAddress, urlProblem } from './addresses';
import { outboxRow } from './events';
import { newSigningSecret, ROTATION_OVERLAP_MS } from './signing';
import { recordIn } from '../domain/idempotent-results';

/** What the endpoint rules need from the configuration. */
export interface WebhookSettings {
  /** WEBHOOK_ALLOW_PRIVATE_URLS: accept http and private/loopback addresses (local development and tests). */
  allowPrivateUrls: boolean;
  /** How host names resolve (the system's DNS, from the webhooks layer; a fake one in tests). */
  lookup: Lookup;
  /** MAX_WEBHOOK_ENDPOINTS_PER_TENANT (DEFAULT_LIMITS when absent). */
  maxEndpointsPerTenant?: number;
}

/** How long an endpoint's create or update waits for its host name to resolve. */
const URL_CHECK_LOOKUP_MS = 10_000;

const iso = (date: Date | null): string | null => date?.toISOString() ?? null;

export const presentEndpoint = (row: WebhookEndpoint): Schemas['WebhookEndpoint'] => ({
  id: row.id,
  url: row.url,
  description: row.description,
  eventTypes: row.eventTypes as Schemas['WebhookEventType'][],
  enabled: row.enabled,
  disabledReason: row.enabled ? null : ((row.disabledReason ?? 'by_user') as 'by_user' | 'failing'),
  failingSince: iso(row.failingSince),
  previousSecretExpiresAt: iso(row.previousSecretExpiresAt),
  createdAt: row.createdAt.toISOString(),
  updatedAt: row.updatedAt.toISOString(),
});

export const presentDelivery = (row: DeliveryRow): Schemas['WebhookDelivery'] => ({
  id: row.id,
  event: JSON.parse(row.event.body) as Schemas['WebhookEvent'],
  status: row.status,
  attempts: row.attempts,
  lastAttemptAt: iso(row.lastAttemptAt),
  lastStatusCode: row.lastStatusCode,
  lastDurationMs: row.lastDurationMs,
  lastError: row.lastError,
  lastResponseExcerpt: row.lastResponseExcerpt,
  nextAttemptAt: row.status === 'pending' ? iso(row.nextAttemptAt) : null,
  deliveredAt: iso(row.deliveredAt),
  createdAt: row.createdAt.toISOString(),
});

/** Refuses a URL that is not https or does not resolve to public addresses only (unless private ones are allowed). */
async function checkUrl(url: string, settings: WebhookSettings): Promise<void> {
  const problem = urlProblem(url, settings.allowPrivateUrls);
  const refuse = (detail: string) =>
    new ProblemError('webhook_url_not_allowed', `The webhook URL ${detail}.`, {
      errors: [{ path: '/body/url', message: aboutField('/body/url', detail) }],
    });
  if (problem) throw refuse(problem);
  if (settings.allowPrivateUrls) return;
  try {
    await resolveDeliveryAddress(new URL(url), false, settings.lookup, AbortSignal.timeout(URL_CHECK_LOOKUP_MS));
  } catch {
    // Only a host name gets here (urlProblem judged the literals and the port). Whether it does not exist, fails to
    // resolve or resolves to a private address, the answer is the same: any other would map the internal DNS.
    throw refuse(ruleMessages.publicHost);
  }
}

async function findEndpoint(db: Db, tenantId: string, endpointId: string) {
  const endpoint = isId(endpointId) ? await findEndpointOfTenant(db, tenantId, endpointId) : null;
  if (!endpoint) throw notFound('webhook endpoint');
  return endpoint;
}

export async function listWebhookEndpoints(db: Db, actor: Actor, tenantId: string, request: PageRequest) {
  await authorize(db, actor, tenantId, 'manageWebhooks');
  return readPage(request, {
    rows: (page: Page) => endpointsPage(db, tenantId, page),
    totalCount: () => countWebhookEndpointsOf(db, tenantId),
    present: presentEndpoint,
  });
}

export async function createWebhookEndpoint(
  db: Db,
  actor: Actor,
  tenantId: string,
  input: Schemas['CreateWebhookEndpointBody'],
  settings: WebhookSettings,
  heldKey?: HeldKey,
): Promise<Schemas['CreatedWebhookEndpoint']> {
  await authorize(db, actor, tenantId, 'manageWebhooks');
  await checkUrl(input.url, settings);
  const enabled = input.enabled ?? true;
  const cap = settings.maxEndpointsPerTenant ?? DEFAULT_LIMITS.webhookEndpointsPerTenant;
  const secret = newSigningSecret();
  const id = newId();
  const data = {
    id,
    tenantId,
    url: input.url,
    description: input.description ?? '',
    eventTypes: input.eventTypes ?? [],
    enabled,
    disabledReason: enabled ? null : 'by_user',
    // Sealed at rest (prisma/src/secret-box.ts); the plaintext is shown once, here.
    secret: secretBoxOf(db).seal(secret, webhookSecretSlot(id, 'secret')),
  };
  const endpoint = await createWithinCap(
    db,
    {
      counted: 'webhookEndpoints',
      ownerId: tenantId,
      cap,
      refusal: webhookEndpointLimitReached,
    },
    async (tx) => {
      const created = { ...presentEndpoint(await insertEndpoint(tx, data)), secret };
      await recordIn(db, tx, heldKey, created);
      return created;
    },
  );
  return endpoint;
}

export async function getWebhookEndpoint(db: Db, actor: Actor, tenantId: string, endpointId: string) {
  await authorize(db, actor, tenantId, 'manageWebhooks');
  return presentEndpoint(await findEndpoint(db, tenantId, endpointId));
}

export async function updateWebhookEndpoint(
  db: Db,
  actor: Actor,
  {
    tenantId,
    endpointId,
    changes,
    settings,
  }: {
    tenantId: string;
    endpointId: string;
    changes: Schemas['UpdateWebhookEndpointBody'];
    settings: WebhookSettings;
  },
) {
  await authorize(db, actor, tenantId, 'manageWebhooks');
  const current = await findEndpoint(db, tenantId, endpointId);
  if (changes.url !== undefined) await checkUrl(changes.url, settings);
  const enabling = changes.enabled === true && !current.enabled;
  const updated = await updateEndpoint(db, current.id, {
    ...(changes.url !== undefined && { url: changes.url }),
    ...(changes.description !== undefined && { description: changes.description }),
    ...(changes.eventTypes !== undefined && { eventTypes: changes.eventTypes }),
    ...(changes.enabled === false && current.enabled && { enabled: false, disabledReason: 'by_user' }),
    // Enabled again: the run of failures that disabled it is over; its waiting deliveries go out.
    ...(enabling && { enabled: true, disabledReason: null, failingSince: null }),
    updatedAt: new Date(),
  });
  if (enabling) db.outbox.webhooks.signal();
  return presentEndpoint(updated);
}

export async function deleteWebhookEndpoint(db: Db, actor: Actor, tenantId: string, endpointId: string) {
  await authorize(db, actor, tenantId, 'manageWebhooks');
  // Checked before the statement: an id that is not one of ours names no endpoint, so nothing may be deleted.
  if (!isId(endpointId)) throw notFound('webhook endpoint');
  if (!(await deleteEndpointOfTenant(db, tenantId, endpointId))) throw notFound('webhook endpoint');
}

/**
 * A new secret; the current one becomes the previous one and keeps signing for 24 hours (a rotation within
 * those 24 hours drops the older previous secret: at most two signatures are sent).
 */
export async function rotateWebhookEndpointSecret(
  db: Db,
  actor: Actor,
  tenantId: string,
  endpointId: string,
  now = new Date(),
): Promise<Schemas['CreatedWebhookEndpoint']> {
  await authorize(db, actor, tenantId, 'manageWebhooks');
  const current = await findEndpoint(db, tenantId, endpointId);
  const secret = newSigningSecret();
  const box = secretBoxOf(db);
  const updated = await updateEndpoint(db, current.id, {
    secret: box.seal(secret, webhookSecretSlot(current.id, 'secret')),
    // Sealed values are bound to their column: the current secret is re-sealed for the previous one's.
    previousSecret: box.seal(
      box.open(current.secret, webhookSecretSlot(current.id, 'secret')),
      webhookSecretSlot(current.id, 'previous_secret'),
    ),
    previousSecretExpiresAt: new Date(now.getTime() + ROTATION_OVERLAP_MS),
    updatedAt: now,
  });
  return { ...presentEndpoint(updated), secret };
}

/** Queues a webhook_endpoint.test event for this endpoint alone: the event and its delivery, written together. */
export async function testWebhookEndpoint(db: Db, actor: Actor, tenantId: string, endpointId: string) {
  await authorize(db, actor, tenantId, 'manageWebhooks');
  const endpoint = await findEndpoint(db, tenantId, endpointId);
  const now = new Date();
  const event = outboxRow(
    'webhook_endpoint.test',
    tenantId,
    { webhookEndpoint: { id: endpoint.id, url: endpoint.url } },
    now,
    {
      endpointId: endpoint.id,
    },
  );
  const delivery = await insertEventWithDelivery(db, event, {
    id: newId(),
    endpointId: endpoint.id,
    tenantId: endpoint.tenantId,
    now,
  });
  db.outbox.webhooks.signal();
  return presentDelivery(delivery);
}

export async function listWebhookDeliveries(
  db: Db,
  actor: Actor,
  tenantId: string,
  endpointId: string,
  request: PageRequest,
) {
  await authorize(db, actor, tenantId, 'manageWebhooks');
  const endpoint = await findEndpoint(db, tenantId, endpointId);
  return readPage(request, {
    rows: (page: Page) => deliveriesPage(db, endpoint.id, page),
    totalCount: () => countDeliveriesOf(db, endpoint.id),
    present: presentDelivery,
  });
}

/** Sends a delivery again as soon as possible, whatever its state (same event, same `webhook-id`). */
export async function retryWebhookDelivery(
  db: Db,
  actor: Actor,
  tenantId: string,
  endpointId: string,
  deliveryId: string,
) {
  await authorize(db, actor, tenantId, 'manageWebhooks');
  const endpoint = await findEndpoint(db, tenantId, endpointId);
  if (!isId(deliveryId)) throw notFound('delivery');
  if (!(await markDeliveryForRetry(db, { endpointId: endpoint.id, deliveryId, now: new Date() })))
    throw notFound('delivery');
  db.outbox.webhooks.signal();
  return presentDelivery(await findDelivery(db, deliveryId));
}
