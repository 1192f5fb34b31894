import { ADMIN_TOKEN, startTestServer, type TestServer, type TestUser } from '../support/server';

/**
 * Paths are case-sensitive everywhere, one rule for Express, the contract's validator and the operator-route
 * matcher. When the validator matched case-insensitively, `POST /v1/Admin/users` was authenticated as an API-key
 * call (the operator matcher is exact) yet matched the operator operation.
 */
let server: TestServer;
let ada: TestUser;

beforeAll(async () => {
  server = await startTestServer();
  ada = await server.createUser('ada');
});
afterAll(() => server.close());

const body = { email: 'case@example.com', firstName: 'Case', lastName: 'Sensitive' };

describe('case-sensitive routing', () => {
  it('answers 404 to an operator path in another case, with an API key', async () => {
    const res = await server.call('/v1/Admin/users', { method: 'POST', apiKey: ada.apiKey, json: body });
    expect([res.status, (await res.json()).code]).toEqual([404, 'not_found']);
    expect(await server.database.prisma.user.count({ where: { email: body.email } })).toBe(0);
  });

  it('does not take the operator token there (it is no operator route)', async () => {
    const res = await server.call('/v1/Admin/users', {
      method: 'POST',
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}` },
      json: body,
    });
    expect([res.status, (await res.json()).code]).toEqual([401, 'unauthenticated']);
  });

  it.each(['/v1/Tenants', '/v1/ME', '/V1/tenants', '/v1/api-Keys'])('answers 404 to GET %s', async (path) => {
    const res = await server.call(path, { apiKey: ada.apiKey });
    expect([res.status, (await res.json()).code]).toEqual([404, 'not_found']);
  });

  it.each(['/Docs', '/OPENAPI.yaml', '/Console'])('answers 404 to GET %s outside the base path', async (path) => {
    expect((await server.call(path)).status).toBe(404);
  });

  it('still serves the paths as the contract writes them', async () => {
    expect((await server.call('/v1/tenants', { apiKey: ada.apiKey })).status).toBe(200);
    expect((await server.call('/openapi.yaml')).status).toBe(200);
  });
});
