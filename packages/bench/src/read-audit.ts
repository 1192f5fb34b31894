import { callApi, type Fixtures } from './fixtures';

/**
 * Every list and read of the API, for `--count-queries`: statements per request on the server only (the baseline
 * implements the load scenarios, not these). Pages are full, so a statement per row (N+1) cannot hide: the user
 * belongs to more than a page of tenants, each with works, and the request has a few events.
 */
export interface AuditRead {
  title: string;
  path: string;
}

export interface AuditData {
  workId: string;
  requestId: string;
}

/** Tenants created so that `GET /tenants?limit=20` returns a full page with a next page. */
export const AUDIT_EXTRA_TENANTS = 21;

export async function createAuditData(baseUrl: string, fixtures: Fixtures): Promise<AuditData> {
  const call = <T>(method: string, path: string, body?: unknown) =>
    callApi<T>(baseUrl, fixtures.apiKey, method, path, body);
  for (let i = 1; i <= AUDIT_EXTRA_TENANTS; i++) {
    const { tenant } = await call<{ tenant: { id: string } }>('POST', '/v1/tenants', { name: `Audit tenant ${i}` });
    await call('POST', `/v1/tenants/${tenant.id}/works`, { name: 'Its only work' });
  }
  const works = `/v1/tenants/${fixtures.readTenantId}/works`;
  const { work } = await call<{ work: { id: string } }>('POST', works, { name: 'Audited work' });
  const requests = `${works}/${work.id}/requests`;
  let requestId = '';
  for (let i = 0; i < 21; i++) {
    const { request } = await call<{ request: { id: string } }>('POST', requests, {
      title: `Audited request ${i}`,
      message: 'Please confirm.',
      recipient: { email: 'grace@example.com', firstName: 'Grace', lastName: 'Hopper' },
    });
    requestId = request.id;
  }
  await call('PUT', `${requests}/${requestId}/confirm`, { answer: 'Confirmed.' });
  await call('PUT', `${requests}/${requestId}/validate`);
  return { workId: work.id, requestId };
}

export function auditReads(fixtures: Fixtures, data: AuditData): AuditRead[] {
  const tenant = `/v1/tenants/${fixtures.readTenantId}`;
  const work = `${tenant}/works/${data.workId}`;
  const request = `${work}/requests/${data.requestId}`;
  return [
    { title: 'GET /me', path: '/v1/me' },
    { title: 'GET /api-keys', path: '/v1/api-keys' },
    { title: 'GET /tenants (20 per page, each with works)', path: '/v1/tenants?limit=20' },
    { title: 'GET /tenants/{id}', path: tenant },
    { title: 'GET /tenants/{id}/members', path: `${tenant}/members` },
    { title: 'GET /tenants/{id}/works (20)', path: `${tenant}/works?limit=20` },
    { title: 'GET …/works/{id}', path: work },
    { title: 'GET …/works/{id}/requests (20)', path: `${work}/requests?limit=20` },
    { title: 'GET …/requests/{id}', path: request },
    { title: 'GET …/requests/{id}/events', path: `${request}/events` },
    { title: 'GET /tenants/{id}/webhook-endpoints', path: `${tenant}/webhook-endpoints` },
  ];
}
