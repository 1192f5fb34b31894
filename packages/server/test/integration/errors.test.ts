import http from 'node:http';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { loadSpec, resolveRef } from '../../src/http/spec';
import { expectProblem } from '../support/problems';
import { startTestServer, type TestServer, type TestUser } from '../support/server';

/** Every error is problem+json with a stable code, whoever raised it. */
let server: TestServer;
let ada: TestUser;

beforeAll(async () => {
  server = await startTestServer();
  ada = await server.createUser('ada');
});
afterAll(() => server.close());

describe('authentication errors', () => {
  it.each([
    ['no header', undefined],
    ['another scheme', 'Basic YWRhOnNlY3JldA=='],
    ['a malformed key', 'Bearer not-a-key'],
    ['an unknown key', `Bearer wk_abcdefghij_${'A'.repeat(43)}`],
  ])('answers 401 with WWW-Authenticate for %s', async (_, authorization) => {
    const res = await server.call('/v1/me', { headers: authorization ? { Authorization: authorization } : {} });
    expect(res.headers.get('www-authenticate')).toBe('Bearer realm="works-api"');
    await expectProblem(res, 401, 'unauthenticated');
  });

  it('answers 401 for a key whose secret part is wrong', async () => {
    const tampered = ada.apiKey.slice(0, -1) + (ada.apiKey.endsWith('A') ? 'B' : 'A');
    await expectProblem(await server.call('/v1/me', { apiKey: tampered }), 401, 'unauthenticated');
  });

  it('checks the key before the body, so strangers learn nothing about the contract', async () => {
    await expectProblem(
      await server.call('/v1/tenants', { method: 'POST', json: { nope: 1 } }),
      401,
      'unauthenticated',
    );
  });

  it('refuses API keys on operator routes and a wrong operator token', async () => {
    const body = { email: 'op@example.com', firstName: 'O', lastName: 'P' };
    await expectProblem(
      await server.call('/v1/admin/users', { method: 'POST', apiKey: ada.apiKey, json: body }),
      401,
      'unauthenticated',
    );
    await expectProblem(
      await server.call('/v1/admin/users', {
        method: 'POST',
        headers: { Authorization: 'Bearer wrong-token-wrong-token' },
        json: body,
      }),
      401,
      'unauthenticated',
    );
  });
});

describe('malformed requests', () => {
  it('answers 400 validation_failed with errors[] for a body that breaks the contract', async () => {
    // The validator stops at the first error (collecting all of them costs more on hostile input).
    const empty = await expectProblem(
      await server.call('/v1/tenants', { method: 'POST', apiKey: ada.apiKey, json: { name: '' } }),
      400,
      'validation_failed',
    );
    expect(empty.errors).toEqual([{ path: '/body/name', message: 'name must not be blank' }]);
    const extra = await expectProblem(
      await server.call('/v1/tenants', { method: 'POST', apiKey: ada.apiKey, json: { name: 'Ok', extra: true } }),
      400,
      'validation_failed',
    );
    expect(extra.errors).toEqual([{ path: '/body/extra', message: 'unknown property "extra"' }]);
  });

  it('answers 400 validation_failed for a bad query parameter or path id', async () => {
    await expectProblem(await server.call('/v1/tenants?limit=0', { apiKey: ada.apiKey }), 400, 'validation_failed');
    await expectProblem(await server.call('/v1/tenants?limit=101', { apiKey: ada.apiKey }), 400, 'validation_failed');
    await expectProblem(await server.call('/v1/tenants?unknown=1', { apiKey: ada.apiKey }), 400, 'validation_failed');
    await expectProblem(
      await server.call('/v1/tenants/not%20an%20id', { apiKey: ada.apiKey }),
      400,
      'validation_failed',
    );
  });

  it('answers 400 invalid_cursor for a cursor the API never returned', async () => {
    await expectProblem(await server.call('/v1/tenants?after=bm9wZQ', { apiKey: ada.apiKey }), 400, 'invalid_cursor');
  });

  it('answers 400 malformed_json for a body that is not JSON', async () => {
    const res = await server.call('/v1/tenants', {
      method: 'POST',
      apiKey: ada.apiKey,
      headers: { 'Content-Type': 'application/json' },
      body: '{"name": "unterminated',
    });
    await expectProblem(res, 400, 'malformed_json');
  });

  it('answers 415 for a body that is not application/json', async () => {
    const res = await server.call('/v1/tenants', {
      method: 'POST',
      apiKey: ada.apiKey,
      headers: { 'Content-Type': 'text/plain' },
      body: 'name=Acme',
    });
    await expectProblem(res, 415, 'unsupported_media_type');
  });

  it('answers 413 for a body over 64 KiB, and accepts one just under', async () => {
    const json = (size: number) => JSON.stringify({ name: 'Big', description: 'x'.repeat(size) });
    const over = await server.call('/v1/tenants', {
      method: 'POST',
      apiKey: ada.apiKey,
      headers: { 'Content-Type': 'application/json' },
      body: json(64 * 1024),
    });
    await expectProblem(over, 413, 'payload_too_large');
    // Just under the byte limit still reaches the validator (which then refuses the unknown property).
    const under = await server.call('/v1/tenants', {
      method: 'POST',
      apiKey: ada.apiKey,
      headers: { 'Content-Type': 'application/json' },
      body: json(64 * 1024 - 100),
    });
    await expectProblem(under, 400, 'validation_failed');
  });

  it('answers 404 for unknown routes, inside and outside /v1', async () => {
    await expectProblem(await server.call('/v1/nothing-here', { apiKey: ada.apiKey }), 404, 'not_found');
    await expectProblem(await server.call('/nothing-here'), 404, 'not_found');
  });

  it('answers 405 for a known route with another method, as the contract declares it', async () => {
    const res = await server.call('/v1/me', { method: 'DELETE', apiKey: ada.apiKey });
    const body = await expectProblem(res, 405, 'method_not_allowed');
    expect(res.headers.get('allow')).toBe('GET');
    // Declared beside the operations (no operation answers it): its problem type and its Allow header.
    const { document } = loadSpec();
    const declared = (document as { 'x-responses-outside-operations': Record<string, { $ref: string }> })[
      'x-responses-outside-operations'
    ]['405']!;
    const ajv = new Ajv2020({ strict: false });
    addFormats(ajv);
    ajv.addSchema(document, 'api');
    const response = resolveRef(document, declared.$ref) as {
      headers: Record<string, unknown>;
      content: Record<string, { schema: { $ref: string } }>;
    };
    expect(Object.keys(response.headers)).toContain('Allow');
    const validate = ajv.compile({ $ref: `api${response.content['application/problem+json']!.schema.$ref}` });
    expect(validate(body)).toBe(true);
    expect(validate({ ...body, code: 'not_found' })).toBe(false);
  });
});

describe('operator routes without ADMIN_TOKEN', () => {
  it('do not exist', async () => {
    const bare = await startTestServer({ adminToken: null });
    try {
      const res = await bare.call('/v1/admin/users', {
        method: 'POST',
        headers: { Authorization: 'Bearer anything-at-all-here' },
        json: { email: 'x@example.com', firstName: 'X', lastName: 'Y' },
      });
      await expectProblem(res, 404, 'not_found');
    } finally {
      await bare.close();
    }
  });
});

describe('users', () => {
  it('answers 409 email_taken for a second user with the same email, in any case', async () => {
    const res = await server.call('/v1/admin/users', {
      method: 'POST',
      headers: { Authorization: 'Bearer test-admin-token-0123456789' },
      json: { email: ada.email.toUpperCase(), firstName: 'Ada', lastName: 'Again' },
    });
    await expectProblem(res, 409, 'email_taken');
  });
});

describe('bodies of operations that take none', () => {
  // An operation answers only the problems its contract declares: a GET, or a DELETE that takes no body, never reads
  // one, so it cannot answer malformed_json or payload_too_large (which the server's own check would report).
  it('are ignored, malformed or too large', async () => {
    // fetch() sends no body with a GET: node:http does.
    const send = (method: string, path: string, body: string) =>
      new Promise<number>((resolve, reject) => {
        const request = http.request(`${server.baseUrl}${path}`, {
          method,
          headers: {
            Authorization: `Bearer ${ada.apiKey}`,
            'Content-Type': 'application/json',
            'Content-Length': Buffer.byteLength(body),
          },
        });
        request.once('response', (res) => {
          res.resume();
          res.once('end', () => resolve(res.statusCode!));
        });
        request.once('error', reject);
        request.end(body);
      });
    expect(await send('GET', '/v1/me', '{not json')).toBe(200);
    expect(await send('GET', '/v1/api-keys', `"${'a'.repeat(70_000)}"`)).toBe(200);
    expect(await send('DELETE', '/v1/api-keys/0193a1b0-9f0a-7b1c-8d2e-3f4a5b6c7d8e', '{not json')).toBe(404);
  });

  it('are still read, and refused, where the operation takes one', async () => {
    await expectProblem(
      await server.call('/v1/tenants', {
        apiKey: ada.apiKey,
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: '{not json',
      }),
      400,
      'malformed_json',
    );
  });
});
