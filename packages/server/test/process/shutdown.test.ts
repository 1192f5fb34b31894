import http from 'node:http';
import net from 'node:net';
import { openDatabase } from '@works-api/prisma';
import { ADMIN_TOKEN, createUserAt } from '../support/server';
import { databaseEnv, removeDataDirs, type ServerProcess, spawnServer } from '../support/process';

/**
 * Graceful shutdown of `node dist/main.js`: on SIGTERM it stops accepting, finishes the request in flight, closes
 * the database cleanly and exits 0. The slow request is a client that has sent its headers but not its body yet:
 * the server is in the middle of it, and the test decides when it ends (no sleeps).
 */

const createApiKey = async (server: ServerProcess) =>
  (await createUserAt(server.baseUrl, 'shutdown', { headers: { Connection: 'close' } })).apiKey;

/** POST /v1/tenants with `Expect: 100-continue`: resolves `started` once the server has taken the request on. */
function slowCreateTenant(server: ServerProcess, apiKey: string, body: string) {
  const request = http.request(`${server.baseUrl}/v1/tenants`, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${apiKey}`,
      'Content-Type': 'application/json',
      'Content-Length': Buffer.byteLength(body),
      Expect: '100-continue',
    },
  });
  const started = new Promise<void>((resolve) => request.once('continue', resolve));
  const response = new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>(
    (resolve, reject) => {
      request.once('response', (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text }));
      });
      request.once('error', reject);
    },
  );
  request.flushHeaders();
  return { started, response, finish: () => request.end(body) };
}

function connectionRefused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(false)));
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
  });
}

async function tenantExists(env: Record<string, string>, name: string): Promise<boolean> {
  const database = await openDatabase(
    env.DATABASE_URL ? { kind: 'postgres', url: env.DATABASE_URL } : { kind: 'pglite', dataDir: env.PGLITE_DIR! },
  );
  try {
    return (await database.prisma.tenant.count({ where: { name } })) === 1;
  } finally {
    await database.close();
  }
}

afterAll(removeDataDirs);

describe('SIGTERM', () => {
  it('finishes the request in flight, refuses new connections, closes the database and exits 0', async () => {
    const env = { ...(await databaseEnv()), ADMIN_TOKEN, SHUTDOWN_TIMEOUT_MS: '20000' };
    const server = await spawnServer(env);
    const apiKey = await createApiKey(server);
    const name = `Finished during shutdown ${Date.now()}`;
    const slow = slowCreateTenant(server, apiKey, JSON.stringify({ name }));
    await slow.started;

    server.child.kill('SIGTERM');
    await server.waitForLine((line) => String(line.msg).startsWith('shutting down'));
    expect(await connectionRefused(server.port)).toBe(true);

    slow.finish();
    const response = await slow.response;
    expect(response.status).toBe(201);
    expect(response.headers.connection).toBe('close');
    expect(JSON.parse(response.body).tenant.name).toBe(name);

    expect(await server.exited).toEqual({ code: 0, signal: null });
    expect(server.lines.some((line) => line.msg === 'shut down: database closed')).toBe(true);
    expect(server.lines.find((line) => line.msg === 'request' && line.route === '/v1/tenants')).toMatchObject({
      status: 201,
    });
    // The database was closed cleanly: it opens again and holds the tenant created during the shutdown.
    expect(await tenantExists(env, name)).toBe(true);
  });

  it('cuts off a request still running after SHUTDOWN_TIMEOUT_MS, still closes the database, and exits 1', async () => {
    const env = { ...(await databaseEnv()), ADMIN_TOKEN, SHUTDOWN_TIMEOUT_MS: '200' };
    const server = await spawnServer(env);
    const apiKey = await createApiKey(server);
    const slow = slowCreateTenant(server, apiKey, JSON.stringify({ name: 'Never finished' }));
    await slow.started;

    server.child.kill('SIGTERM');
    await expect(slow.response).rejects.toThrow(/socket hang up|ECONNRESET/);
    expect(await server.exited).toEqual({ code: 1, signal: null });
    expect(server.lines.some((line) => line.msg === 'requests still in flight were cut off')).toBe(true);
    expect(server.lines.some((line) => line.msg === 'shut down: database closed')).toBe(true);
    expect(await tenantExists(env, 'Never finished')).toBe(false);
  });

  it('holds a signal that arrives during start-up until the database is open, then stops cleanly', async () => {
    const env = await databaseEnv();
    const server = await spawnServer(env, { untilListening: false });
    expect(server.lines.map((line) => line.msg)).toEqual(['works-api starting']);
    server.child.kill('SIGTERM');
    expect(await server.exited).toEqual({ code: 0, signal: null });
    expect(server.lines.map((line) => line.msg)).toContain('shut down: database closed');
    expect(await tenantExists(env, 'no such tenant')).toBe(false);
  });

  it('does the same on SIGINT (Ctrl-C) with nothing in flight', async () => {
    const server = await spawnServer(await databaseEnv());
    server.child.kill('SIGINT');
    expect(await server.exited).toEqual({ code: 0, signal: null });
  });
});
