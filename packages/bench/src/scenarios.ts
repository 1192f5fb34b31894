import type { Request } from 'autocannon';
import type { Fixtures } from './fixtures';

/** What a scenario drives: the fixtures (same ids on the server and the baseline) and its own pending requests. */
export interface Target {
  fixtures: Fixtures;
  /** Ids of pending requests this target created (create-request fills it, confirm-validate walks it). */
  pool: string[];
}

export type ScenarioId =
  'create-tenant' | 'create-work' | 'create-request' | 'confirm-validate' | 'get-tenant' | 'list-works';

export interface Scenario {
  id: ScenarioId;
  title: string;
  kind: 'write' | 'read';
  requests(target: Target): Request[];
}

let sequence = 0;
// Unique names: the slug lookup stays on its common path (no collision), as for real users.
const uniqueName = (what: string) => `${what} ${process.pid} ${++sequence}`;

const json = (apiKey: string) => ({ Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' });
const auth = (apiKey: string) => ({ Authorization: `Bearer ${apiKey}` });

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
        body: JSON.stringify({
          title: 'Confirm the Q3 figures',
          message: 'Please confirm the figures in section 3.',
          recipient: { email: 'grace@example.com', firstName: 'Grace', lastName: 'Hopper' },
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
];
