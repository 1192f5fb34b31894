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
  // Search and the tenant-wide lists, on the big tenant (200,000 works, 1,000,000 requests in one work). Each search
  // for four kinds of word (issue 44): the large data set's texts are ' work N work N a work of the large data set'
  // and ' request N please confirm the figures in section 3 recipient (N % 1000) example com grace hopper', and a
  // word matches the start of a stored word, so `12` is a word of middling frequency whose matches sit together in
  // time (works 12, 120-129, ..., 120000-129999: 5.6%; requests the same, 1.1%, plus recipients 12 and 120-129, 1.1%
  // spread evenly), and `12345` a rare one (11 works, 11 requests).
  {
    id: 'list-tenant-requests',
    title: "the tenant's requests, no search",
    kind: 'read',
    requests: ({ fixtures }) => [tenantRead(fixtures, '/requests?limit=20')],
  },
  ...searches('works', 'search works', { common: 'data', rare: '12345', middling: '12', twoWords: 'work+1234' }),
  ...searches('requests', "search the tenant's requests", {
    common: 'figures',
    rare: '12345',
    middling: '12',
    twoWords: 'request+12345',
  }),
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

/** A list's search for a common word, a rare one, one of middling frequency, and two words together. */
function searches(
  list: 'works' | 'requests',
  title: string,
  words: { common: string; rare: string; middling: string; twoWords: string },
): Scenario[] {
  const kinds = [
    ['common', 'a common word', words.common],
    ['rare', 'a rare word', words.rare],
    ['middling', 'a middling word', words.middling],
    ['two-words', '2 words', words.twoWords],
  ] as const;
  return kinds.map(([kind, what, q]) => ({
    // The two-word searches keep the ids they had before the other three were added.
    id: kind === 'two-words' ? `search-${list}` : `search-${list}-${kind}`,
    title: `${title}, ${what}`,
    kind: 'read',
    requests: ({ fixtures }) => [tenantRead(fixtures, `/${list}?limit=20&q=${q}`)],
  }));
}

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
