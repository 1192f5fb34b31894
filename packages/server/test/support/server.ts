import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { createClient, type WorksApiClient } from '@works-api/client';
import { createApp } from '../../src/app';
import { type Database, type DatabaseTarget, openDatabase } from '../../src/db/client';

export const ADMIN_TOKEN = 'test-admin-token-0123456789';

/** The database the suite runs on: PostgreSQL when DATABASE_URL is set, else a fresh PGlite from the template. */
export function testDatabaseTarget(): DatabaseTarget {
  const url = process.env.DATABASE_URL;
  if (url) return { kind: 'postgres', url };
  const template = process.env.WORKS_API_PGLITE_TEMPLATE;
  if (!template) throw new Error('run the tests through jest (test/support/global-setup.ts makes the template)');
  return { kind: 'pglite', loadDataDir: new Blob([readFileSync(template)]) };
}

export interface TestUser {
  id: string;
  email: string;
  apiKey: string;
  client: WorksApiClient;
}

export interface TestServer {
  baseUrl: string;
  database: Database;
  bugs: unknown[];
  /** A new user (unique email) with an API key, through the operator route. */
  createUser(name?: string): Promise<TestUser>;
  /** fetch() relative to the server, with an API key when given. */
  call(path: string, init?: RequestInit & { apiKey?: string; json?: unknown }): Promise<Response>;
  close(): Promise<void>;
}

let userCount = 0;

/** The real app on a random loopback port, checking every response against the contract. */
export async function startTestServer(options: { adminToken?: string | null } = {}): Promise<TestServer> {
  const database = await openDatabase(testDatabaseTarget());
  const bugs: unknown[] = [];
  const app = createApp({
    db: database.prisma,
    adminToken: options.adminToken === null ? undefined : (options.adminToken ?? ADMIN_TOKEN),
    validateResponses: true,
    onBug: (error) => bugs.push(error),
  });
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const call: TestServer['call'] = (path, init = {}) => {
    const { apiKey, json, ...rest } = init;
    const headers = new Headers(rest.headers);
    if (apiKey) headers.set('Authorization', `Bearer ${apiKey}`);
    if (json !== undefined) headers.set('Content-Type', 'application/json');
    return fetch(baseUrl + path, { ...rest, headers, body: json === undefined ? rest.body : JSON.stringify(json) });
  };

  return {
    baseUrl,
    database,
    bugs,
    call,
    async createUser(name = 'user') {
      const email = `${name}-${process.pid}-${++userCount}-${Date.now()}@example.com`;
      const res = await call('/v1/admin/users', {
        method: 'POST',
        headers: { Authorization: `Bearer ${ADMIN_TOKEN}` },
        json: { email, firstName: name, lastName: 'Tester' },
      });
      if (res.status !== 201) throw new Error(`creating a user failed: ${res.status} ${await res.text()}`);
      const body = (await res.json()) as { user: { id: string }; apiKey: { secret: string } };
      return {
        id: body.user.id,
        email,
        apiKey: body.apiKey.secret,
        // No retries in tests: a test sees exactly what the server answered (a 429 or 503 is not hidden).
        client: createClient({ baseUrl, apiKey: body.apiKey.secret, retry: false }),
      };
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await database.close();
      // A response that broke the contract, or any other bug, fails the file that caused it.
      if (bugs.length > 0) throw new Error(`the server hit ${bugs.length} bug(s): ${String(bugs[0])}`);
    },
  };
}
