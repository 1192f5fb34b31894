import type { Request } from 'autocannon';
import type { Fixtures } from './fixtures';
import { auth, json, type Scenario } from './scenarios';

/**
 * The scale mode's extra scenarios: reads whose cost may grow with the data, and a create whose slug
 * collides with many. They need `fixtures.scale`; the scale mode runs them after the scenarios above.
 */
export const scaleScenarios: Scenario[] = [
  {
    id: 'list-tenants',
    title: 'list 20 tenants',
    kind: 'read',
    requests: ({ fixtures }) => [{ method: 'GET', path: '/v1/tenants?limit=20', headers: auth(fixtures.apiKey) }],
  },
  {
    id: 'create-popular-tenant',
    title: 'create tenant, a popular name',
    kind: 'write',
    requests: ({ fixtures }) => [
      {
        method: 'POST',
        path: '/v1/tenants',
        headers: json(fixtures.apiKey),
        body: JSON.stringify({ name: scaleOf(fixtures).popularName }),
      },
    ],
  },
  {
    id: 'list-all-requests',
    title: 'list 20 requests',
    kind: 'read',
    requests: ({ fixtures }) => [
      {
        method: 'GET',
        path: `/v1/tenants/${fixtures.readTenantId}/works/${fixtures.readWorkId}/requests?limit=20`,
        headers: auth(fixtures.apiKey),
      },
    ],
  },
  {
    id: 'deep-page',
    title: 'a page deep in requests',
    kind: 'read',
    requests: ({ fixtures }) => [
      {
        method: 'GET',
        path:
          `/v1/tenants/${fixtures.readTenantId}/works/${fixtures.readWorkId}/requests?limit=20` +
          `&after=${encodeURIComponent(scaleOf(fixtures).deepCursor)}`,
        headers: auth(fixtures.apiKey),
      },
    ],
  },
  {
    id: 'list-members',
    title: 'list 20 members',
    kind: 'read',
    requests: ({ fixtures }) => [
      { method: 'GET', path: `/v1/tenants/${fixtures.readTenantId}/members?limit=20`, headers: auth(fixtures.apiKey) },
    ],
  },
  {
    id: 'list-api-keys',
    title: 'list 20 API keys',
    kind: 'read',
    requests: ({ fixtures }) => [{ method: 'GET', path: '/v1/api-keys?limit=20', headers: auth(fixtures.apiKey) }],
  },
  // Search and the tenant-wide lists, on the big tenant (200,000 works, 1,000,000 requests in one work).
  {
    id: 'search-works',
    title: 'search works, 2 words',
    kind: 'read',
    requests: ({ fixtures }) => [tenantRead(fixtures, '/works?limit=20&q=work+1234')],
  },
  {
    id: 'search-requests',
    title: "search the tenant's requests",
    kind: 'read',
    requests: ({ fixtures }) => [tenantRead(fixtures, '/requests?limit=20&q=request+12345')],
  },
  {
    id: 'inbox-confirmed',
    title: 'inbox: confirmed, to validate',
    kind: 'read',
    requests: ({ fixtures }) => [tenantRead(fixtures, '/requests?limit=20&status=confirmed')],
  },
  {
    id: 'inbox-recipient',
    title: 'inbox: one recipient',
    kind: 'read',
    requests: ({ fixtures }) => [tenantRead(fixtures, '/requests?limit=20&recipient=recipient-42%40example.com')],
  },
  {
    id: 'events-feed',
    title: 'events feed, 20 events',
    kind: 'read',
    requests: ({ fixtures }) => [tenantRead(fixtures, '/events?limit=20')],
  },
];

/** A GET under the read tenant (the big tenant in the scale mode). */
const tenantRead = (fixtures: Fixtures, path: string): Request => ({
  method: 'GET',
  path: `/v1/tenants/${fixtures.readTenantId}${path}`,
  headers: auth(fixtures.apiKey),
});

function scaleOf(fixtures: Fixtures): NonNullable<Fixtures['scale']> {
  if (!fixtures.scale) throw new Error('this scenario runs only in the scale mode (pnpm bench -- --scale)');
  return fixtures.scale;
}
