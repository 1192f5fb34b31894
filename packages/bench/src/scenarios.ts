import { randomUUID } from 'node:crypto';
import type { Request } from 'autocannon';
import type { Fixtures } from './fixtures';

/** What a scenario drives: the fixtures (same ids on the server and the baseline) and its own pending requests. */
export interface Target {
  fixtures: Fixtures;
  /** Ids of pending requests this target created (create-request fills it, confirm-validate walks it). */
  pool: string[];
}

export type ScenarioId =
  | 'create-tenant'
  | 'create-work'
  | 'create-request'
  | 'create-request-keyed'
  | 'confirm-validate'
  | 'early-validate'
  | 'cancel'
  | 'get-tenant'
  | 'list-works'
  | 'list-requests'
  | 'mixed'
  | 'get-tenant-restricted'
  | 'create-work-restricted'
  | ScaleScenarioId;

/** Scenarios only the scale mode runs (the baseline server does not implement them). */
export type ScaleScenarioId =
  | 'list-tenants'
  | 'create-popular-tenant'
  | 'list-all-requests'
  | 'deep-page'
  | 'list-members'
  | 'list-api-keys'
  | 'list-tenant-requests'
  | 'search-works'
  | 'search-works-common'
  | 'search-works-rare'
  | 'search-works-middling'
  | 'search-requests'
  | 'search-requests-common'
  | 'search-requests-rare'
  | 'search-requests-middling'
  | 'inbox-confirmed'
  | 'inbox-recipient'
  | 'events-feed';

export interface Scenario {
  id: ScenarioId;
  title: string;
  kind: 'write' | 'read' | 'mixed';
  /** Acts on pending requests from the target's pool: how many HTTP requests use up one pending request. */
  requestsPerPending?: number;
  /** Not run on the baseline server, which does not implement what it measures (Idempotency-Key); --against runs it. */
  serverOnly?: true;
  requests(target: Target): Request[];
}

let sequence = 0;
// Unique names: the slug lookup stays on its common path (no collision), as for real users. Not ending in a number
// either: a name that does ("Load work 57") is one of a numbered series, and every creation of a series bumps its
// base's slug counter, one row (per tenant for works, for the whole service for tenants), under that row's lock.
const uniqueName = (what: string) => `${what} ${process.pid} ${(++sequence).toString(36)}x`;

export const json = (apiKey: string) => ({ Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' });
export const auth = (apiKey: string) => ({ Authorization: `Bearer ${apiKey}` });

export const scenarios: Scenario[] = [
  {
    id: 'create-tenant',
    title: 'create tenant',
    kind: 'write',
    requests: ({ fixtures }) => [
      {
        method: 'POST',
        path: '/v1/tenants',
        headers: json(fixtures.apiKey),
        setupRequest: (req) => ({ ...req, body: JSON.stringify({ name: uniqueName('Load tenant') }) }),
      },
    ],
  },
  {
    id: 'create-work',
    title: 'create work',
    kind: 'write',
    requests: ({ fixtures }) => [
      {
        method: 'POST',
        path: `/v1/tenants/${fixtures.writeTenantId}/works`,
        headers: json(fixtures.apiKey),
        setupRequest: (req) => ({
          ...req,
          body: JSON.stringify({ name: uniqueName('Load work'), description: 'Created by pnpm bench.' }),
        }),
      },
    ],
  },
  {
    id: 'create-request',
    title: 'create request',
    kind: 'write',
    requests: ({ fixtures, pool }) => [
      {
        method: 'POST',
        path: `/v1/tenants/${fixtures.writeTenantId}/works/${fixtures.requestWorkId}/requests`,
        headers: json(fixtures.apiKey),
        // Each to an address of its own, as a work's requests go: one address takes at most
        // MAX_EMAILS_PER_RECIPIENT_PER_DAY emails a day (20 by default), counted under that address's one row, so
        // thousands a second to one address would measure that row's lock, held by each request until it commits.
        setupRequest: (req) => ({
          ...req,
          body: JSON.stringify({
            title: 'Confirm the Q3 figures',
            message: 'Please confirm the figures in section 3.',
            recipient: {
              email: `${uniqueName('grace').replace(/ /g, '.')}@example.com`,
              firstName: 'Grace',
              lastName: 'Hopper',
            },
          }),
        }),
        // Every request created here is pending: confirm-validate walks them next.
        onResponse: (status, body) => {
          if (status === 201) pool.push((JSON.parse(body) as { request: { id: string } }).request.id);
        },
      },
    ],
  },
  {
    id: 'confirm-validate',
    title: 'confirm + validate',
    kind: 'write',
    requestsPerPending: 2,
    requests: ({ fixtures, pool }) => {
      const base = `/v1/tenants/${fixtures.writeTenantId}/works/${fixtures.requestWorkId}/requests`;
      let last = '';
      return [
        {
          method: 'PUT',
          headers: json(fixtures.apiKey),
          body: JSON.stringify({ answer: 'Confirmed, thanks.' }),
          setupRequest: (req, context) => {
            // The runner sizes the run to the pool; should it run dry, the 409s show up as errors.
            const id = pool.shift() ?? last;
            last = id;
            (context as { id?: string }).id = id;
            return { ...req, path: `${base}/${id}/confirm` };
          },
        },
        {
          method: 'PUT',
          headers: auth(fixtures.apiKey),
          setupRequest: (req, context) => ({
            ...req,
            path: `${base}/${String((context as { id?: string }).id)}/validate`,
          }),
        },
      ];
    },
  },
  {
    id: 'early-validate',
    title: 'validate early',
    kind: 'write',
    requestsPerPending: 1,
    requests: ({ fixtures, pool }) => [actOnPending(fixtures, pool, 'PUT', 'early_validate')],
  },
  {
    id: 'cancel',
    title: 'cancel',
    kind: 'write',
    requestsPerPending: 1,
    requests: ({ fixtures, pool }) => [
      actOnPending(fixtures, pool, 'DELETE', 'cancel', { reason: 'Sent by mistake.' }),
    ],
  },
  {
    id: 'get-tenant',
    title: 'get tenant',
    kind: 'read',
    requests: ({ fixtures }) => [
      { method: 'GET', path: `/v1/tenants/${fixtures.readTenantId}`, headers: auth(fixtures.apiKey) },
    ],
  },
  {
    id: 'list-works',
    title: 'list 20 works',
    kind: 'read',
    requests: ({ fixtures }) => [
      { method: 'GET', path: `/v1/tenants/${fixtures.readTenantId}/works?limit=20`, headers: auth(fixtures.apiKey) },
    ],
  },
  {
    id: 'list-requests',
    title: 'list 20 pending requests',
    kind: 'read',
    requests: ({ fixtures }) => [listPendingRequests(fixtures)],
  },
  {
    // What a partner integration sends most: 7 reads for every 3 writes.
    id: 'mixed',
    title: 'mixed, 70% reads',
    kind: 'mixed',
    requests: (target) => {
      const { fixtures } = target;
      const getTenant = { method: 'GET', path: `/v1/tenants/${fixtures.readTenantId}`, headers: auth(fixtures.apiKey) };
      const listWorks = {
        method: 'GET',
        path: `/v1/tenants/${fixtures.readTenantId}/works?limit=20`,
        headers: auth(fixtures.apiKey),
      };
      const [createWork] = byId('create-work').requests(target);
      const [createRequest] = byId('create-request').requests(target);
      const [createTenant] = byId('create-tenant').requests(target);
      return [
        getTenant,
        listWorks,
        listPendingRequests(fixtures),
        createRequest!,
        getTenant,
        listWorks,
        createWork!,
        listPendingRequests(fixtures),
        getTenant,
        createTenant!,
      ] as Request[];
    },
  },
];

/**
 * A restricted key (issue 40: limited to the fixtures' two tenants and six scopes) doing what get-tenant and
 * create-work do with the full key: the cost of the restrictions is the CPU per request between the two, in the
 * same run (a target: at most 5% more).
 */
export const restrictedPairs: Array<{ full: ScenarioId; restricted: ScenarioId }> = [
  { full: 'get-tenant', restricted: 'get-tenant-restricted' },
  { full: 'create-work', restricted: 'create-work-restricted' },
];

for (const { full, restricted } of restrictedPairs) {
  const of = byId(full);
  scenarios.push({
    ...of,
    id: restricted,
    title: `${of.title}, restricted key`,
    requests: (target) =>
      of.requests({ ...target, fixtures: { ...target.fixtures, apiKey: target.fixtures.restrictedApiKey } }),
  });
}

/**
 * create-request as partners send it: the client sends an Idempotency-Key with every creation (a new one per
 * request), so the key is taken, and the result recorded with the request. Server only: the baseline keeps no keys.
 */
{
  const of = byId('create-request');
  scenarios.push({
    ...of,
    id: 'create-request-keyed',
    title: `${of.title}, Idempotency-Key`,
    serverOnly: true,
    requests: (target) =>
      of.requests(target).map((request) => ({
        ...request,
        setupRequest: (req, context) => {
          const made = typeof request.setupRequest === 'function' ? request.setupRequest(req, context) : req;
          return { ...made, headers: { ...made.headers, 'Idempotency-Key': randomUUID() } };
        },
      })),
  });
}

function byId(id: ScenarioId): Scenario {
  return scenarios.find((s) => s.id === id)!;
}

function listPendingRequests(fixtures: Fixtures): Request {
  return {
    method: 'GET',
    path: `/v1/tenants/${fixtures.readTenantId}/works/${fixtures.readWorkId}/requests?status=pending&limit=20`,
    headers: auth(fixtures.apiKey),
  };
}

/** One action on the next pending request of the pool (filled by create-request, topped up by the runner). */
function actOnPending(
  fixtures: Fixtures,
  pool: string[],
  method: 'PUT' | 'DELETE',
  action: string,
  body?: unknown,
): Request {
  const base = `/v1/tenants/${fixtures.writeTenantId}/works/${fixtures.requestWorkId}/requests`;
  return {
    method,
    headers: body === undefined ? auth(fixtures.apiKey) : json(fixtures.apiKey),
    ...(body !== undefined && { body: JSON.stringify(body) }),
    // The runner sizes the run to the pool; should it run dry, the 409s show up as errors.
    setupRequest: (req) => ({ ...req, path: `${base}/${pool.shift() ?? 'dry'}/${action}` }),
  };
}
