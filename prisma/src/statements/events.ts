import type { Db } from '../handle';
import { type CappedListWindow, type CappedPage, readCappedPage } from './capped-lists';

/** What the events feed shows of an event: the very body its webhook endpoints are sent. */
export interface FeedEventRow {
  id: string;
  body: string;
}

/** The feed's filter: the event types asked for (all when absent), and the oldest event id still kept. */
export interface EventsFeedFilter {
  types?: readonly string[] | undefined;
  keptSince: string;
}

/**
 * A page of the tenant's events feed, newest first, with the caller's role and the capped count (capped-lists.ts):
 * by the feed's partial index (tenant_id, id) WHERE endpoint_id IS NULL, from `keptSince` on.
 */
export function eventsFeedPage(
  db: Db,
  window: CappedListWindow,
  { types, keptSince }: EventsFeedFilter,
): Promise<CappedPage<FeedEventRow>> {
  const where = [
    'e.tenant_id = :tenantId::uuid',
    'e.endpoint_id IS NULL',
    ...(types === undefined ? [] : [types.length === 1 ? 'e.type = :type' : 'e.type = ANY(:types::text[])']),
    'e.id >= :keptSince::uuid',
  ].join(' AND ');
  return readCappedPage<FeedEventRow>(db, window, {
    columns: 'e.id, e.body',
    from: 'webhook_events e',
    key: 'e.id',
    where,
    params: { keptSince, ...(types !== undefined && (types.length === 1 ? { type: types[0] } : { types })) },
    countOrder: 'e.tenant_id DESC, e.id DESC',
  });
}
