/**
 * The data every scenario needs, created through the API like a real client would: one user with an API key,
 * a tenant to read (3 more members, 25 works and 25 pending requests in one of them, so a page of 20 is full), and
 * a tenant to write into with a work that receives the requests.
 */
export interface Fixtures {
  apiKey: string;
  /**
   * A key of the same user limited to the read and write tenants and to the scopes the scenarios need (issue 40):
   * the `-restricted` scenarios send it, to price a restricted key against the full one in the same run. A build
   * from before restricted keys (an A/B with --against) refuses the restrictions: then it is the full key.
   */
  restrictedApiKey: string;
  readTenantId: string;
  /** A work of the read tenant with READ_WORK_REQUESTS pending requests. */
  readWorkId: string;
  writeTenantId: string;
  requestWorkId: string;
  /** What the scale mode's extra scenarios need (scenarios.ts, scaleScenarios). */
  scale?: {
    /** The name the popular-name create sends ("Acme": 20k tenants already have it in the large data set). */
    popularName: string;
    /** The `after` cursor of a page deep in the read work's requests. */
    deepCursor: string;
  };
}

export const READ_TENANT_WORKS = 25;
export const READ_WORK_REQUESTS = 25;

/** One API call while setting up data: a JSON body if any, and a 2xx answer or an error saying what came back. */
export async function callApi<T>(
  baseUrl: string,
  token: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<T> {
  const res = await fetch(baseUrl + path, {
    method,
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  if (!res.ok) throw new Error(`bench set-up: ${method} ${path} answered ${res.status}: ${await res.text()}`);
  return (await res.json()) as T;
}

export async function createFixtures(baseUrl: string, adminToken: string, runId: string): Promise<Fixtures> {
  const call = <T>(method: string, path: string, body: unknown, token: string) =>
    callApi<T>(baseUrl, token, method, path, body);

  const { apiKey } = await call<{ apiKey: { secret: string } }>(
    'POST',
    '/v1/admin/users',
    { email: `bench-${runId}@example.com`, firstName: 'Ada', lastName: 'Lovelace' },
    adminToken,
  );
  const key = apiKey.secret;
  const tenant = async (name: string) =>
    (await call<{ tenant: { id: string } }>('POST', '/v1/tenants', { name }, key)).tenant.id;
  const work = async (tenantId: string, name: string) =>
    (
      await call<{ work: { id: string } }>(
        'POST',
        `/v1/tenants/${tenantId}/works`,
        { name, description: 'A benchmark fixture.' },
        key,
      )
    ).work.id;

  const readTenantId = await tenant(`Bench reads ${runId}`);
  for (const [i, name] of ['Grace Hopper', 'Alan Turing', 'Edsger Dijkstra'].entries()) {
    const [firstName, lastName] = name.split(' ');
    const email = `member${i}-${runId}@example.com`;
    // Membership is by consent: the user is invited, then accepts with their own key.
    const created = await call<{ apiKey: { secret: string } }>(
      'POST',
      '/v1/admin/users',
      { email, firstName, lastName },
      adminToken,
    );
    const { invitation } = await call<{ invitation?: { id: string } }>(
      'POST',
      `/v1/tenants/${readTenantId}/members`,
      { email, role: 'member' },
      key,
    );
    // Builds from before membership by consent (an A/B with --against) add the member at once.
    if (invitation) await call('POST', `/v1/me/invitations/${invitation.id}/accept`, undefined, created.apiKey.secret);
  }
  let readWorkId = '';
  for (let i = 1; i <= READ_TENANT_WORKS; i++) readWorkId = await work(readTenantId, `Fixture work ${i}`);
  for (let i = 1; i <= READ_WORK_REQUESTS; i++)
    await call(
      'POST',
      `/v1/tenants/${readTenantId}/works/${readWorkId}/requests`,
      { title: `Fixture request ${i}`, recipient: { email: 'grace@example.com' } },
      key,
    );

  const writeTenantId = await tenant(`Bench writes ${runId}`);
  const requestWorkId = await work(writeTenantId, 'Requests go here');
  const restrictedApiKey = await restrictedKey(baseUrl, key, [readTenantId, writeTenantId]);
  return { apiKey: key, restrictedApiKey, readTenantId, readWorkId, writeTenantId, requestWorkId };
}

/** The user's key limited to `tenants` and the scenarios' scopes; the full key on a build without restrictions. */
async function restrictedKey(baseUrl: string, key: string, tenants: string[]): Promise<string> {
  const body = {
    name: 'Bench restricted key',
    tenants,
    scopes: ['tenants:read', 'works:read', 'works:write', 'requests:read', 'requests:write', 'requests:act'],
  };
  const res = await fetch(`${baseUrl}/v1/api-keys`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (res.status === 400) return key;
  if (!res.ok) throw new Error(`bench set-up: POST /v1/api-keys answered ${res.status}: ${await res.text()}`);
  return ((await res.json()) as { apiKey: { secret: string } }).apiKey.secret;
}
