import type { Db } from '@works-api/prisma';
import { type Actor, authorize } from '../access';
import { indexOrder, newestFirst, type Page, type PageRequest, readPage } from '../paging';
import { firstIdAt, HISTORY_RETENTION_MS, type WebhookEvent } from '../webhooks/events';

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
  await authorize(db, actor, tenantId, 'readTenant');
  // By the feed's partial index (tenant_id, id) WHERE endpoint_id IS NULL; events past the retention are out of
  // the feed at once, whenever the clean-up deletes them.
  const keptSince = firstIdAt(new Date(Date.now() - HISTORY_RETENTION_MS));
  const filter = {
    tenantId,
    endpointId: null,
    ...(types && { type: types.length === 1 ? types[0]! : { in: types } }),
    AND: [{ id: { gte: keptSince } }],
  };
  return readPage(query, {
    rows: (page: Page) => {
      const { where, ...window } = newestFirst(page, 'id');
      return db.webhookEvent.findMany({ where: { ...filter, ...where }, select: { id: true, body: true }, ...window });
    },
    capped: (take) => db.webhookEvent.count({ where: filter, orderBy: indexOrder('tenantId', 'id'), take }),
    present: (row) => JSON.parse(row.body) as WebhookEvent,
  });
}
