import v8 from 'node:v8';
import vm from 'node:vm';
import { createTenant } from '../support/fixtures';
import { bytes, chunked, type RawResponse, rawRequest } from '../support/raw-http';
import { startTestServer, type TestServer, type TestUser } from '../support/server';

/**
 * The bad-input table: bodies at 64 KiB ± 1 byte and of 20 MB, invalid JSON, wrong content types, 10,000 levels
 * of nesting, huge and repeated headers, repeated and unknown query parameters, path traversal and junk in ids,
 * NUL and lone surrogates in strings. Each is sent as raw bytes and must get a clear 4xx problem+json with a
 * stable code (or, for the bodies within the limit, be accepted), store nothing, and leave the server up, with
 * its memory back where it was once it is all over. Field-by-field limits are in input-limits.test.ts.
 */
let server: TestServer;
let ada: TestUser;
let port: number;
let tenantId: string;

beforeAll(async () => {
  server = await startTestServer();
  ada = await server.createUser('ada');
  port = Number(new URL(server.baseUrl).port);
  tenantId = (await createTenant(ada, 'Bad input')).id;
});
afterAll(() => server.close());

const KiB = 1024;
const auth = () => `Authorization: Bearer ${ada.apiKey}`;
const post = (path: string, body: Buffer | string | Iterable<Buffer>, headers: string[] = [], length?: number) => {
  const size = length ?? (typeof body === 'string' || Buffer.isBuffer(body) ? Buffer.byteLength(body) : undefined);
  const framing = size === undefined ? 'Transfer-Encoding: chunked' : `Content-Length: ${size}`;
  return rawRequest(port, [`POST ${path} HTTP/1.1`, 'Host: 127.0.0.1', auth(), framing, ...headers].join('\r\n'), body);
};
const postJson = (path: string, body: Buffer | string | Iterable<Buffer>, headers: string[] = [], length?: number) =>
  post(path, body, ['Content-Type: application/json', ...headers], length);
const get = (path: string, headers: string[] = [auth()]) =>
  rawRequest(port, [`GET ${path} HTTP/1.1`, 'Host: 127.0.0.1', ...headers].join('\r\n'));

/** `{"name":"Padded"}` padded with white space to exactly `size` bytes: valid JSON and a valid tenant. */
const paddedTenant = (size: number) => {
  const json = '{"name":"Padded"';
  return `${json}${' '.repeat(size - json.length - 1)}}`;
};
const nested = (depth: number, open: string, close: string, inner = '1') =>
  `${open.repeat(depth)}${inner}${close.repeat(depth)}`;
const tenants = () => `/v1/tenants`;
const works = () => `/v1/tenants/${tenantId}/works`;

interface Row {
  what: string;
  send: () => Promise<RawResponse>;
  status: number;
  code?: string;
}

const rows: Row[] = [
  // Body size: the limit is 64 KiB (65,536 bytes), inclusive.
  { what: 'a JSON body of 64 KiB − 1 byte', send: () => postJson(tenants(), paddedTenant(64 * KiB - 1)), status: 201 },
  { what: 'a JSON body of exactly 64 KiB', send: () => postJson(tenants(), paddedTenant(64 * KiB)), status: 201 },
  {
    what: 'a JSON body of 64 KiB + 1 byte',
    send: () => postJson(tenants(), paddedTenant(64 * KiB + 1)),
    status: 413,
    code: 'payload_too_large',
  },
  {
    what: 'a chunked JSON body of 64 KiB + 1 byte',
    send: () => postJson(tenants(), chunked([Buffer.from(paddedTenant(64 * KiB + 1))])),
    status: 413,
    code: 'payload_too_large',
  },
  {
    what: 'a 20 MB body with its Content-Length',
    send: () => postJson(tenants(), bytes(20e6), [], 20e6),
    status: 413,
    code: 'payload_too_large',
  },
  {
    what: 'a 20 MB chunked body',
    send: () => postJson(tenants(), chunked(bytes(20e6))),
    status: 413,
    code: 'payload_too_large',
  },

  // Not JSON, or not JSON as we take it.
  { what: 'invalid JSON', send: () => postJson(tenants(), '{"name":'), status: 400, code: 'malformed_json' },
  {
    what: 'JSON with trailing bytes',
    send: () => postJson(tenants(), '{"name":"a"} x'),
    status: 400,
    code: 'malformed_json',
  },
  { what: 'an empty body', send: () => postJson(tenants(), ''), status: 400, code: 'validation_failed' },
  {
    what: 'text/plain',
    send: () => post(tenants(), '{"name":"a"}', ['Content-Type: text/plain']),
    status: 415,
    code: 'unsupported_media_type',
  },
  {
    what: 'a form',
    send: () => post(tenants(), 'name=a', ['Content-Type: application/x-www-form-urlencoded']),
    status: 415,
    code: 'unsupported_media_type',
  },
  { what: 'no Content-Type', send: () => post(tenants(), '{"name":"a"}'), status: 415, code: 'unsupported_media_type' },
  {
    what: 'JSON declared as UTF-16',
    send: () => post(tenants(), '{"name":"a"}', ['Content-Type: application/json; charset=utf-16']),
    status: 415,
    code: 'unsupported_media_type',
  },
  {
    what: 'JSON declared as Latin-1',
    send: () => post(tenants(), '{"name":"a"}', ['Content-Type: application/json; charset=latin1']),
    status: 415,
    code: 'unsupported_media_type',
  },

  // Deep nesting: parsed, then refused by the contract (never recursed into).
  {
    what: '10,000 nested arrays as the name',
    send: () => postJson(tenants(), `{"name":${nested(10_000, '[', ']')}}`),
    status: 400,
    code: 'validation_failed',
  },
  {
    what: '10,000 nested objects as an unknown property',
    send: () => postJson(tenants(), `{"name":"a","x":${nested(10_000, '{"a":', '}')}}`),
    status: 400,
    code: 'validation_failed',
  },
  {
    what: '10,000 nested arrays as the whole body',
    send: () => postJson(tenants(), nested(10_000, '[', ']')),
    status: 400,
    code: 'validation_failed',
  },
  {
    what: '32,000 nested arrays (as deep as 64 KiB allows)',
    send: () => postJson(tenants(), nested(32_000, '[', ']')),
    status: 400,
    code: 'validation_failed',
  },

  // Headers: Node allows a 16 KiB header section; beyond it, 431.
  {
    what: 'a 20 KB header',
    send: () => get('/v1/me', [auth(), `X-Big: ${'a'.repeat(20_000)}`]),
    status: 431,
    code: 'headers_too_large',
  },
  {
    what: 'a 64 KB header',
    send: () => get('/v1/me', [auth(), `X-Big: ${'a'.repeat(64 * KiB)}`]),
    status: 431,
    code: 'headers_too_large',
  },
  {
    what: '2,000 small headers (26 KB)',
    send: () => get('/v1/me', [auth(), ...Array.from({ length: 2000 }, (_, i) => `X-H${i}: value`)]),
    status: 431,
    code: 'headers_too_large',
  },
  {
    what: 'a 20 KB URL',
    send: () => get(`/v1/tenants?after=${'a'.repeat(20_000)}`),
    status: 431,
    code: 'headers_too_large',
  },
  {
    what: 'Authorization twice',
    send: () => get('/v1/me', [auth(), 'Authorization: Bearer wk_other_key']),
    status: 400,
    code: 'validation_failed',
  },
  {
    what: 'Content-Type twice',
    send: () => postJson(tenants(), '{"name":"a"}', ['Content-Type: text/plain']),
    status: 400,
    code: 'validation_failed',
  },
  {
    what: 'Idempotency-Key twice',
    send: () => postJson(tenants(), '{"name":"a"}', ['Idempotency-Key: one', 'Idempotency-Key: two']),
    status: 400,
    code: 'validation_failed',
  },
  {
    what: 'X-Request-Id twice',
    send: () => get('/v1/me', [auth(), 'X-Request-Id: a', 'X-Request-Id: b']),
    status: 400,
    code: 'validation_failed',
  },
  {
    what: 'Content-Length twice, different',
    send: () => postJson(tenants(), '{"name":"a"}', ['Content-Length: 3']),
    status: 400,
    code: 'malformed_request',
  },
  {
    what: 'a NUL in a header value',
    send: () => get('/v1/me', [auth(), 'X-Note: a\u0000b']),
    status: 400,
    code: 'malformed_request',
  },
  {
    what: 'a header line without a colon',
    send: () => get('/v1/me', [auth(), 'Not a header']),
    status: 400,
    code: 'malformed_request',
  },
  {
    what: 'a request line that is not HTTP',
    send: () => rawRequest(port, 'HELLO\r\n\r\n'),
    status: 400,
    code: 'malformed_request',
  },

  // Query parameters.
  { what: 'limit twice', send: () => get(`${works()}?limit=1&limit=2`), status: 400, code: 'validation_failed' },
  { what: 'after twice', send: () => get(`${works()}?after=a&after=b`), status: 400, code: 'validation_failed' },
  { what: 'an unknown parameter', send: () => get(`${works()}?sort=name`), status: 400, code: 'validation_failed' },
  {
    what: 'a parameter in brackets',
    send: () => get(`${works()}?limit[gt]=1`),
    status: 400,
    code: 'validation_failed',
  },
  {
    what: 'a percent-encoded NUL in a parameter',
    send: () => get(`${works()}?discarded=%00`),
    status: 400,
    code: 'validation_failed',
  },

  // Ids in paths: traversal, encodings, junk. The contract's pattern refuses them (400), or no route has them (404).
  {
    what: '../ segments in the path',
    send: () => get('/v1/tenants/../../../etc/passwd'),
    status: 404,
    code: 'not_found',
  },
  {
    what: 'encoded ../ in an id',
    send: () => get('/v1/tenants/..%2F..%2Fetc%2Fpasswd'),
    status: 400,
    code: 'validation_failed',
  },
  { what: 'an id of ..', send: () => get('/v1/tenants/%2e%2e'), status: 400, code: 'validation_failed' },
  {
    what: 'a broken percent-encoding in an id',
    send: () => get('/v1/tenants/%ZZ'),
    status: 400,
    code: 'validation_failed',
  },
  {
    what: 'a truncated UTF-8 sequence in an id',
    send: () => get('/v1/tenants/%E0%A4%A'),
    status: 400,
    code: 'validation_failed',
  },
  { what: 'an encoded NUL in an id', send: () => get('/v1/tenants/%00'), status: 400, code: 'validation_failed' },
  {
    what: 'an encoded CRLF and header in an id',
    send: () => get('/v1/tenants/a%0d%0aX-Injected:%201'),
    status: 400,
    code: 'validation_failed',
  },
  {
    what: 'a well-formed id that is no UUID, in a work path',
    send: () => get(`${works()}/abc/requests/abc/events`),
    status: 404,
    code: 'not_found',
  },
  {
    what: 'a 65-character id',
    send: () => get(`/v1/tenants/${'a'.repeat(65)}`),
    status: 400,
    code: 'validation_failed',
  },

  // NUL and lone surrogates in strings.
  {
    what: 'an escaped NUL in a name',
    send: () => postJson(tenants(), '{"name":"a\\u0000b"}'),
    status: 400,
    code: 'validation_failed',
  },
  {
    what: 'a raw NUL byte in a JSON string',
    send: () => postJson(tenants(), '{"name":"a\u0000b"}'),
    status: 400,
    code: 'malformed_json',
  },
  {
    what: 'an escaped lone high surrogate in a name',
    send: () => postJson(tenants(), '{"name":"a\\ud800b"}'),
    status: 400,
    code: 'validation_failed',
  },
  {
    what: 'an escaped lone low surrogate in a description',
    send: () => postJson(works(), '{"name":"w","description":"\\udc00"}'),
    status: 400,
    code: 'validation_failed',
  },
  {
    what: 'a lone surrogate encoded as UTF-8 bytes',
    send: () =>
      postJson(tenants(), Buffer.from([...Buffer.from('{"name":"a'), 0xed, 0xa0, 0x80, ...Buffer.from('"}')])),
    status: 400,
    code: 'malformed_json',
  },
  {
    what: 'bytes that are not UTF-8 at all',
    send: () => postJson(tenants(), Buffer.from([...Buffer.from('{"name":"'), 0xff, 0xfe, ...Buffer.from('"}')])),
    status: 400,
    code: 'malformed_json',
  },
  {
    what: 'a NUL in a property name',
    send: () => postJson(tenants(), '{"name":"a","\\u0000":1}'),
    status: 400,
    code: 'validation_failed',
  },
];

async function tenantCount(): Promise<number> {
  return server.database.prisma.membership.count({ where: { user: { email: ada.email } } });
}

/** Heap in use after a full collection. */
function heapAfterGc(): number {
  v8.setFlagsFromString('--expose-gc');
  (vm.runInNewContext('gc') as () => void)();
  return process.memoryUsage().heapUsed;
}

describe('the bad-input table', () => {
  let heapBefore: number;
  beforeAll(() => {
    heapBefore = heapAfterGc();
  });

  it.each(rows.map((row) => [row.what, row] as const))('%s', async (_what, row) => {
    const before = await tenantCount();
    const res = await row.send();
    expect({ status: res.status, code: row.code && JSON.parse(res.body).code }).toEqual({
      status: row.status,
      code: row.code,
    });
    if (row.status >= 400) {
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      const problem = JSON.parse(res.body) as Record<string, unknown>;
      expect(problem).toMatchObject({
        type: `https://works-api.dev/problems/${row.code}`,
        status: row.status,
        code: row.code,
      });
      expect(typeof problem.detail).toBe('string');
      expect(res.headers['x-request-id']).toBeDefined();
      expect(await tenantCount()).toBe(before);
    }
  });

  it('leaves the server up, and its memory back where it was', async () => {
    expect((await get('/healthz', [])).status).toBe(200);
    expect((await get('/v1/me')).status).toBe(200);
    expect(server.bugs).toEqual([]);
    const grown = heapAfterGc() - heapBefore;
    console.log(`bad-input: ${rows.length} rows; heap after GC grew by ${(grown / 1e6).toFixed(1)} MB`);
    expect(grown).toBeLessThan(16e6);
  });
});
