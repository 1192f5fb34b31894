import type { Problem } from '../support/roles';
import { createTenant, createWork } from '../support/fixtures';
import { startTestServer, type TestServer, type TestUser } from '../support/server';

/**
 * Every validation failure names the field and says the rule in words (domain/validation-messages.ts), whoever
 * found it: the contract's validator, the server's text rules or the date rules. A date-time that does not exist
 * is a 400, never a 500 and never moved to another day.
 */
let server: TestServer;
let ada: TestUser;
let tenantId: string;
let workId: string;

beforeAll(async () => {
  server = await startTestServer();
  ada = await server.createUser('ada');
  tenantId = (await createTenant(ada)).id;
  workId = (await createWork(ada, tenantId)).id;
});
afterAll(() => server.close());

async function errorsOf(path: string, init: RequestInit & { json?: unknown } = {}) {
  const res = await server.call(path, { apiKey: ada.apiKey, ...init });
  const body = await res.json<Problem>();
  expect({ status: res.status, code: body.code }).toEqual({ status: 400, code: 'validation_failed' });
  return body.errors;
}

const hours = (count: number) => new Date(Date.now() + count * 3_600_000);
const requestsPath = () => `/v1/tenants/${tenantId}/works/${workId}/requests`;
const newRequest = (extra: Record<string, unknown>) => ({
  title: 'Confirm the figures',
  recipient: { email: 'rae@example.com' },
  ...extra,
});

describe('a body that breaks the contract', () => {
  it.each([
    ['a number for a name', { name: 123 }, '/body/name', 'name must be a string'],
    ['an empty name', { name: '' }, '/body/name', 'name must not be blank'],
    ['a name of spaces', { name: '   ' }, '/body/name', 'name must not be blank'],
    [
      'a name of Unicode spaces (the server trims them)',
      { name: '\u3000\u2003' },
      '/body/name',
      'name must not be blank',
    ],
    ['a control character', { name: 'Acme\u0007' }, '/body/name', 'name must not contain control characters'],
    ['a line break', { name: 'Acme\nResearch' }, '/body/name', 'name must not contain control characters'],
    ['201 characters', { name: 'a'.repeat(201) }, '/body/name', 'name must be at most 200 characters'],
    ['1,001 characters', { name: 'a'.repeat(1001) }, '/body/name', 'name must be at most 200 characters'],
    ['an unpaired surrogate', { name: 'a\ud800' }, '/body/name', 'name must not contain an unpaired surrogate'],
    ['no name', {}, '/body/name', 'name is required'],
    ['an unknown property', { name: 'Acme', colour: 'teal' }, '/body/colour', 'unknown property "colour"'],
  ])('%s: %s', async (_, json, path, message) => {
    expect(await errorsOf('/v1/tenants', { method: 'POST', json })).toEqual([{ path, message }]);
  });

  it('names a nested field by its path, and says what a text or an email must be', async () => {
    const works = `/v1/tenants/${tenantId}/works`;
    expect(await errorsOf(works, { method: 'POST', json: { name: 'Report', description: null } })).toEqual([
      { path: '/body/description', message: 'description must be a string' },
    ]);
    expect(await errorsOf(works, { method: 'POST', json: { name: 'Report', description: 'a\u0000b' } })).toEqual([
      {
        path: '/body/description',
        message: 'description must not contain control characters other than line breaks and tabs',
      },
    ]);
    expect(
      await errorsOf(requestsPath(), { method: 'POST', json: newRequest({ recipient: { email: 'not an email' } }) }),
    ).toEqual([
      { path: '/body/recipient/email', message: 'recipient.email must be an email address, such as ada@example.com' },
    ]);
    expect(await errorsOf(`/v1/tenants/${tenantId}/works/${workId}`, { method: 'PATCH', json: {} })).toEqual([
      { path: '/body', message: 'the body must set at least one property' },
    ]);
    const repeated = { url: 'https://hooks.example.com/x', eventTypes: ['work.discarded', 'work.discarded'] };
    expect(await errorsOf(`/v1/tenants/${tenantId}/webhook-endpoints`, { method: 'POST', json: repeated })).toEqual([
      { path: '/body/eventTypes', message: 'eventTypes must not list the same item twice' },
    ]);
  });

  it('says which values a parameter takes, and names headers as the contract writes them', async () => {
    expect(await errorsOf('/v1/tenants?limit=0')).toEqual([
      { path: '/query/limit', message: 'limit must be at least 1' },
    ]);
    expect(await errorsOf('/v1/tenants?limit=101')).toEqual([
      { path: '/query/limit', message: 'limit must be at most 100' },
    ]);
    expect(await errorsOf('/v1/tenants?colour=teal')).toEqual([
      { path: '/query/colour', message: 'unknown query parameter "colour"' },
    ]);
    expect(await errorsOf(`/v1/tenants/${tenantId}/works?discarded=maybe`)).toEqual([
      { path: '/query/discarded', message: 'discarded must be one of "false", "true", "all"' },
    ]);
    expect(await errorsOf('/v1/tenants/not%20an%20id')).toEqual([
      { path: '/path/tenant_id', message: 'tenant_id must be 1 to 64 letters, digits, "-" or "_"' },
    ]);
    const keyed = await errorsOf('/v1/tenants', {
      method: 'POST',
      json: { name: 'Acme' },
      headers: { 'Idempotency-Key': 'two words' },
    });
    expect(keyed).toEqual([
      {
        path: '/headers/idempotency-key',
        message: 'Idempotency-Key must be 1 to 255 visible ASCII characters, without spaces',
      },
    ]);
  });
});

describe('dates', () => {
  const realDateTime = 'dueAt must be a real date and time, such as 2026-11-26T10:00:00Z';

  it.each([
    ['30 February', '2027-02-30T10:00:00Z'],
    ['hour 25', '2027-03-01T25:00:00Z'],
    ['a leap second', '2027-06-30T23:59:60Z'],
    ['no offset', '2027-03-01T10:00:00'],
    ['a date alone', '2027-03-01'],
  ])('refuses a date-time that does not exist or has no zone (%s) with 400, never 500', async (_, dueAt) => {
    expect(await errorsOf(requestsPath(), { method: 'POST', json: newRequest({ dueAt }) })).toEqual([
      { path: '/body/dueAt', message: realDateTime },
    ]);
    expect(server.bugs).toEqual([]);
  });

  it('refuses a due date in the past, and one that is now', async () => {
    for (const dueAt of [hours(-1).toISOString(), '2020-01-01T00:00:00Z'])
      expect(await errorsOf(requestsPath(), { method: 'POST', json: newRequest({ dueAt }) })).toEqual([
        { path: '/body/dueAt', message: 'dueAt must be in the future' },
      ]);
  });

  it('takes an offset and a long fraction, and keeps the instant in UTC to the millisecond', async () => {
    const due = hours(48);
    const local = new Date(due.getTime() + 2 * 3_600_000).toISOString().replace(/\.\d{3}Z$/, '.1234567+02:00');
    const res = await server.call(requestsPath(), {
      method: 'POST',
      apiKey: ada.apiKey,
      json: newRequest({ dueAt: local }),
    });
    expect(res.status).toBe(201);
    const { request } = await res.json<{ request: { dueAt: string } }>();
    expect(request.dueAt).toBe(`${due.toISOString().slice(0, 19)}.123Z`);
  });
});

describe('ids in a path', () => {
  it('reads an upper-case UUID as the same id (UUIDs compare case-insensitively)', async () => {
    const res = await server.call(`/v1/tenants/${tenantId.toUpperCase()}/works/${workId.toUpperCase()}`, {
      apiKey: ada.apiKey,
    });
    expect(res.status).toBe(200);
    const { work } = await res.json<{ work: { id: string } }>();
    expect(work.id).toBe(workId);
  });
});
