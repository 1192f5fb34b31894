import type { components } from '@works-api/client';
import type { TestUser } from './server';

type Schemas = components['schemas'];

let emailCount = 0;

/**
 * An email address no other test has used: unique in this process (the count), across the processes of a run (the
 * pid) and across runs on a PostgreSQL database that outlives them (the time). `name` makes it readable in logs.
 */
export function freshEmail(name = 'user'): string {
  return `${name}-${process.pid}-${++emailCount}-${Date.now()}@example.com`;
}

/** Unwraps an openapi-fetch result, failing loudly with the problem body when the call did not succeed. */
export function ok<T>(result: { data?: T; error?: unknown; response: Response }): T {
  if (result.data === undefined) {
    throw new Error(`${result.response.status} ${JSON.stringify(result.error)}`);
  }
  return result.data;
}

export async function createTenant(user: TestUser, name = 'Acme Research'): Promise<Schemas['Tenant']> {
  return ok(await user.client.POST('/tenants', { body: { name } })).tenant;
}

export async function createWork(user: TestUser, tenantId: string, name = 'Annual report'): Promise<Schemas['Work']> {
  return ok(
    await user.client.POST('/tenants/{tenant_id}/works', { params: { path: { tenant_id: tenantId } }, body: { name } }),
  ).work;
}

export async function createRequest(user: TestUser, tenantId: string, workId: string): Promise<Schemas['Request']> {
  return ok(
    await user.client.POST('/tenants/{tenant_id}/works/{work_id}/requests', {
      params: { path: { tenant_id: tenantId, work_id: workId } },
      body: { title: 'Confirm the figures', recipient: { email: 'recipient@example.com', firstName: 'Rae' } },
    }),
  ).request;
}

/** A tenant with one work and one pending request, owned by `user`. */
export async function requestInNewWork(user: TestUser) {
  const tenant = await createTenant(user);
  const work = await createWork(user, tenant.id);
  const request = await createRequest(user, tenant.id, work.id);
  const path = { tenant_id: tenant.id, work_id: work.id, id: request.id };
  return { tenant, work, request, path };
}

/** A webhook endpoint of `tenantId` at `url` (every event type unless `eventTypes`), with its signing secret. */
export async function subscribe(
  user: TestUser,
  tenantId: string,
  url: string,
  eventTypes?: Array<Schemas['WebhookEvent']['type']>,
) {
  return ok(
    await user.client.POST('/tenants/{tenant_id}/webhook-endpoints', {
      params: { path: { tenant_id: tenantId } },
      body: { url, ...(eventTypes && { eventTypes }) },
    }),
  ).webhookEndpoint;
}
