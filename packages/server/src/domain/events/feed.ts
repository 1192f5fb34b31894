import type { Db } from '@works-api/prisma';
import { eventsFeedPage } from '@works-api/prisma';
import type { Actor } from '../access';
import { readCappedList } from '../capped-list';
import type { PageRequest } from '../paging';
import { firstIdAt, HISTORY_RETENTION_MS, type WebhookEvent } from '../../webhooks/events';

/**
 * The tenant's events feed: every event its webhook endpoints are sent (webhook_endpoint.test aside, which goes
 * to one endpoint only), with the very body they are sent, newest first, for as long as the webhook history is
 * kept (30 days: the dispatcher's clean-up). It is read from the outbox itself, so an event is in the feed from
 * the moment its change commits, whether or not the tenant has an endpoint.
 *
 * Any member may read it: every event is about a request, a work or a membership of the tenant, all of which a
 * member reads through the API already; a partner reconciling after an outage needs no admin key for it.
 */
export async function listEvents(db: Db, actor: Actor, tenantId: string, query: PageRequest & { type?: string }) {
  const types = query.type === undefined ? undefined : [...new Set(query.type.split(','))];
  // Events past the retention are out of the feed at once, whenever the clean-up deletes them. One statement with
  // the caller's membership.
  const keptSince = firstIdAt(new Date(Date.now() - HISTORY_RETENTION_MS));
  return readCappedList(actor, query, {
    tenantId,
    permission: 'readTenant',
    read: (window) => eventsFeedPage(db, window, { types, keptSince }),
    present: (row) => JSON.parse(row.body) as WebhookEvent,
  });
}
