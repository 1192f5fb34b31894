import type { Db } from '@works-api/prisma';
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
  // By the feed's partial index (tenant_id, id) WHERE endpoint_id IS NULL; events past the retention are out of
  // the feed at once, whenever the clean-up deletes them. One statement with the caller's membership.
  const keptSince = firstIdAt(new Date(Date.now() - HISTORY_RETENTION_MS));
  const where = [
    'e.tenant_id = :tenantId::uuid',
    'e.endpoint_id IS NULL',
    ...(types === undefined ? [] : [types.length === 1 ? 'e.type = :type' : 'e.type = ANY(:types::text[])']),
    'e.id >= :keptSince::uuid',
  ].join(' AND ');
  return readCappedList(db, actor, query, {
    tenantId,
    permission: 'readTenant',
    columns: 'e.id, e.body',
    from: 'webhook_events e',
    key: 'e.id',
    where,
    params: {
      keptSince,
      ...(types !== undefined && (types.length === 1 ? { type: types[0] } : { types })),
    },
    countOrder: 'e.tenant_id DESC, e.id DESC',
    present: (row: { id: string; body: string }) => JSON.parse(row.body) as WebhookEvent,
  });
}
