import { useInfiniteQuery, useQuery } from '@tanstack/react-query';
import type { ConnectionPage } from '../components/lists';
import { useSession } from './auth';
import { dataOf, withTag } from './problems';
import type { DiscardedFilter, RequestStatus } from './types';

/** The tenant-wide request views: a status, or overdue (pending past its due date). */
export type InboxView = RequestStatus | 'all' | 'overdue';

export const PAGE_SIZE = 20;

/**
 * Query keys nest like the API's paths, so invalidating a tenant's key refreshes everything read inside it.
 */
export const keys = {
  tenants: ['tenants'] as const,
  tenant: (tenantId: string) => ['tenant', tenantId] as const,
  members: (tenantId: string) => ['tenant', tenantId, 'members'] as const,
  works: (tenantId: string, discarded?: DiscardedFilter) =>
    ['tenant', tenantId, 'works', ...(discarded ? [discarded] : [])] as const,
  work: (tenantId: string, workId: string) => ['tenant', tenantId, 'work', workId] as const,
  requests: (tenantId: string, workId: string, status?: RequestStatus | 'all') =>
    ['tenant', tenantId, 'work', workId, 'requests', ...(status ? [status] : [])] as const,
  request: (tenantId: string, workId: string, id: string) =>
    ['tenant', tenantId, 'work', workId, 'request', id] as const,
  events: (tenantId: string, workId: string, id: string) =>
    ['tenant', tenantId, 'work', workId, 'request', id, 'events'] as const,
  tenantRequests: (tenantId: string, view?: InboxView) =>
    ['tenant', tenantId, 'requests', ...(view ? [view] : [])] as const,
  tenantEvents: (tenantId: string, type?: string) => ['tenant', tenantId, 'events', ...(type ? [type] : [])] as const,
  search: (tenantId: string, what: 'works' | 'requests', q: string) => ['tenant', tenantId, 'search', what, q] as const,
  apiKeys: ['apiKeys'] as const,
  sessions: ['sessions'] as const,
  myInvitations: ['myInvitations'] as const,
};

function usePaged<Node>(
  queryKey: readonly unknown[],
  fetchPage: (after: string | undefined) => Promise<ConnectionPage<Node>>,
) {
  return useInfiniteQuery({
    queryKey,
    queryFn: ({ pageParam }) => fetchPage(pageParam),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => (last.pageInfo.hasNextPage ? (last.pageInfo.endCursor ?? undefined) : undefined),
  });
}

export function useTenants() {
  const { api } = useSession();
  return usePaged(
    keys.tenants,
    async (after) => (await dataOf(api.listTenants({ params: { query: { limit: PAGE_SIZE, after } } }))).tenants,
  );
}

export function useTenant(tenantId: string) {
  const { api } = useSession();
  return useQuery({
    queryKey: keys.tenant(tenantId),
    queryFn: async () => {
      const { data, etag } = await withTag(api.getTenant({ params: { path: { tenant_id: tenantId } } }));
      return { tenant: data.tenant, etag };
    },
  });
}

export function useMembers(tenantId: string) {
  const { api } = useSession();
  return usePaged(
    keys.members(tenantId),
    async (after) =>
      (await dataOf(api.listMembers({ params: { path: { tenant_id: tenantId }, query: { limit: PAGE_SIZE, after } } })))
        .members,
  );
}

export function useWorks(tenantId: string, discarded: DiscardedFilter) {
  const { api } = useSession();
  return usePaged(
    keys.works(tenantId, discarded),
    async (after) =>
      (
        await dataOf(
          api.listWorks({ params: { path: { tenant_id: tenantId }, query: { limit: PAGE_SIZE, after, discarded } } }),
        )
      ).works,
  );
}

export function useWork(tenantId: string, workId: string) {
  const { api } = useSession();
  return useQuery({
    queryKey: keys.work(tenantId, workId),
    queryFn: async () => {
      const { data, etag } = await withTag(api.getWork({ params: { path: { tenant_id: tenantId, work_id: workId } } }));
      return { work: data.work, etag };
    },
  });
}

export function useRequests(tenantId: string, workId: string, status: RequestStatus | 'all') {
  const { api } = useSession();
  return usePaged(
    keys.requests(tenantId, workId, status),
    async (after) =>
      (
        await dataOf(
          api.listRequests({
            params: {
              path: { tenant_id: tenantId, work_id: workId },
              query: { limit: PAGE_SIZE, after, ...(status === 'all' ? {} : { status }) },
            },
          }),
        )
      ).requests,
  );
}

export function useRequest(tenantId: string, workId: string, id: string) {
  const { api } = useSession();
  return useQuery({
    queryKey: keys.request(tenantId, workId, id),
    queryFn: async () => {
      const { data, etag } = await withTag(
        api.getRequest({ params: { path: { tenant_id: tenantId, work_id: workId, id } } }),
      );
      return { request: data.request, etag };
    },
  });
}

export function useRequestEvents(tenantId: string, workId: string, id: string) {
  const { api } = useSession();
  return usePaged(
    keys.events(tenantId, workId, id),
    async (after) =>
      (
        await dataOf(
          api.listRequestEvents({
            params: { path: { tenant_id: tenantId, work_id: workId, id }, query: { limit: PAGE_SIZE, after } },
          }),
        )
      ).events,
  );
}

export function useApiKeys() {
  const { api } = useSession();
  return usePaged(
    keys.apiKeys,
    async (after) => (await dataOf(api.listApiKeys({ params: { query: { limit: PAGE_SIZE, after } } }))).apiKeys,
  );
}

/** The signed-in person's sessions (GET /me/sessions), the current one marked. */
export function useSessions() {
  const { api } = useSession();
  return usePaged(
    keys.sessions,
    async (after) => (await dataOf(api.listSessions({ params: { query: { limit: PAGE_SIZE, after } } }))).sessions,
  );
}

/** The signed-in user's pending invitations (GET /me/invitations). */
export function useMyInvitations() {
  const { api } = useSession();
  return usePaged(
    keys.myInvitations,
    async (after) =>
      (await dataOf(api.listMyInvitations({ params: { query: { limit: PAGE_SIZE, after } } }))).invitations,
  );
}

/** The query of the tenant-wide request list for a view; overdue compares with `now`. */
function inboxQuery(view: InboxView, now: string) {
  if (view === 'all') return {};
  if (view === 'overdue') return { status: 'pending', dueBefore: now };
  return { status: view };
}

/**
 * Every request of the tenant's kept works, in one view (GET /tenants/{tenant_id}/requests), searched with `q`
 * when it is not empty.
 */
export function useTenantRequests(tenantId: string, view: InboxView, now: string, q = '') {
  const { api } = useSession();
  return usePaged(
    [...keys.tenantRequests(tenantId, view), now, q],
    async (after) =>
      (
        await dataOf(
          api.listTenantRequests({
            params: {
              path: { tenant_id: tenantId },
              query: { limit: PAGE_SIZE, after, ...inboxQuery(view, now), ...(q !== '' && { q }) },
            },
          }),
        )
      ).requests,
  );
}

/** The tenant's events feed, of the given types, or of every type when none is given (GET /tenants/{tenant_id}/events). */
export function useTenantEvents(tenantId: string, types: readonly string[]) {
  const { api } = useSession();
  const type = [...types].sort().join(',');
  return usePaged(
    keys.tenantEvents(tenantId, type || 'all'),
    async (after) =>
      (
        await dataOf(
          api.listEvents({
            params: {
              path: { tenant_id: tenantId },
              query: { limit: PAGE_SIZE, after, ...(type !== '' && { type }) },
            },
          }),
        )
      ).events,
  );
}

/** Works (kept ones) whose name, slug or description match `q`; nothing is asked while `q` is empty. */
export function useWorkSearch(tenantId: string, q: string) {
  const { api } = useSession();
  return usePaged(keys.search(tenantId, 'works', q), async (after) =>
    q === ''
      ? emptyPage()
      : (await dataOf(api.listWorks({ params: { path: { tenant_id: tenantId }, query: { limit: 5, after, q } } })))
          .works,
  );
}

/** Requests of the tenant whose title, message or recipient match `q`. */
export function useRequestSearch(tenantId: string, q: string) {
  const { api } = useSession();
  return usePaged(keys.search(tenantId, 'requests', q), async (after) =>
    q === ''
      ? emptyPage()
      : (
          await dataOf(
            api.listTenantRequests({ params: { path: { tenant_id: tenantId }, query: { limit: 5, after, q } } }),
          )
        ).requests,
  );
}

const emptyPage = () => ({ totalCount: 0, edges: [], pageInfo: { hasNextPage: false, endCursor: null } });
