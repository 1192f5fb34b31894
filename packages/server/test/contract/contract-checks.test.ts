import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ContractRecorder, contractClient } from './support/contract';

/** The client-side contract checks fail a call whose response breaks openapi/api.yaml (they can fail). */
let server: Server;
let baseUrl: string;
let reply: { status: number; type?: string; body?: string; headers?: Record<string, string | undefined> };

beforeAll(async () => {
  server = createServer((_req, res) => {
    // Every /v1 response says no-store (the contract requires the header); a reply may override or drop it.
    const headers: Record<string, string | undefined> = {
      'Cache-Control': 'no-store',
      ...(reply.type && { 'Content-Type': reply.type }),
      ...reply.headers,
    };
    res.writeHead(
      reply.status,
      Object.fromEntries(Object.entries(headers).filter((entry): entry is [string, string] => entry[1] !== undefined)),
    );
    res.end(reply.body);
  }).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

const user = {
  id: '0193a1b2-7c3d-7e4f-8a9b-0c1d2e3f4a5b',
  firstName: 'Ada',
  lastName: 'Lovelace',
  email: 'ada@example.com',
  createdAt: '2026-11-22T10:15:00.000Z',
};
const problem = {
  type: 'https://works-api.dev/problems/not_found',
  title: 'Not found',
  status: 404,
  detail: 'x',
  instance: '/v1/me',
  code: 'not_found',
};

async function call(): Promise<{ recorder: ContractRecorder; outcome: Promise<unknown> }> {
  const recorder = new ContractRecorder();
  return { recorder, outcome: contractClient(baseUrl, 'wk_x', recorder).getMe() };
}

it('accepts and records a response that matches the contract', async () => {
  reply = { status: 200, type: 'application/json', body: JSON.stringify({ user }) };
  const { recorder, outcome } = await call();
  await expect(outcome).resolves.toMatchObject({ data: { user } });
  expect(recorder.calls).toEqual([{ operationId: 'getMe', method: 'get', status: 200, through: 'today' }]);
});

it.each([
  [
    'an undeclared property',
    { status: 200, type: 'application/json', body: JSON.stringify({ user: { ...user, age: 3 } }) },
    /must NOT have additional properties/,
  ],
  [
    'a wrong format',
    { status: 200, type: 'application/json', body: JSON.stringify({ user: { ...user, email: 'nope' } }) },
    /must match format "email"/,
  ],
  [
    'an undocumented status',
    { status: 404, type: 'application/problem+json', body: JSON.stringify(problem) },
    /not documented/,
  ],
  [
    'a problem with the wrong media type',
    { status: 401, type: 'application/json', body: JSON.stringify({ ...problem, status: 401 }) },
    /Content-Type application\/json/,
  ],
  [
    'a missing Cache-Control',
    {
      status: 200,
      type: 'application/json',
      body: JSON.stringify({ user }),
      headers: { 'Cache-Control': undefined },
    },
    /the required header Cache-Control is missing/,
  ],
  [
    'a Cache-Control that lets a cache keep it',
    {
      status: 200,
      type: 'application/json',
      body: JSON.stringify({ user }),
      headers: { 'Cache-Control': 'private, max-age=60' },
    },
    /header Cache-Control: data must be equal to one of the allowed values/,
  ],
  [
    'a problem without its code',
    {
      status: 401,
      type: 'application/problem+json',
      body: JSON.stringify({ ...problem, status: 401, code: undefined }),
    },
    /must have required property 'code'/,
  ],
])('fails the call on %s', async (_name, response, message) => {
  reply = response;
  const { recorder, outcome } = await call();
  await expect(outcome).rejects.toThrow(message);
  expect(recorder.calls).toEqual([]);
});
