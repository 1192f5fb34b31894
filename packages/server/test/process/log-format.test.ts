import { spawn } from 'node:child_process';
import { ADMIN_TOKEN } from '../support/server';
import { databaseEnv, MAIN, removeDataDirs, spawnServer, TEST_NODE_ARGS, WORKER } from '../support/process';

/**
 * What `node dist/main.js` (and `node dist/worker.js`) writes on stdout: JSON lines when stdout is not a terminal (log shipping), whatever runs
 * (one process or WEB_CONCURRENCY workers and their primary); readable lines, with the start-up commands as a
 * person pastes them, when it is asked for (a TTY, or LOG_FORMAT=pretty as `pnpm dev` sets).
 */
afterAll(removeDataDirs);

describe('stdout not a terminal', () => {
  it('is JSON lines, naming /docs and /openapi.yaml and the command to create a user', async () => {
    const server = await spawnServer({ ...(await databaseEnv()), ADMIN_TOKEN });
    const listening = await server.waitForLine((line) => typeof line.url === 'string');
    expect(listening).toMatchObject({
      url: `${server.baseUrl}/v1`,
      docs: `${server.baseUrl}/docs`,
      openapi: `${server.baseUrl}/openapi.yaml`,
    });
    const hint = await server.waitForLine((line) => line.msg === 'create a user and an API key');
    expect(hint.command).toBe(
      `curl -X POST ${server.baseUrl}/v1/admin/users -H "Authorization: Bearer $ADMIN_TOKEN" -H "Content-Type: application/json" -d '{"email":"you@example.com","firstName":"Ada","lastName":"Lovelace"}'`,
    );
    server.child.kill('SIGTERM');
    expect(await server.exited).toEqual({ code: 0, signal: null });
  });

  it('stays JSON lines under WEB_CONCURRENCY, the primary included', async () => {
    const env = await databaseEnv();
    // spawnServer parses every stdout line as JSON: a plain-text line fails the test.
    const server = await spawnServer({ ...env, WEB_CONCURRENCY: '2' }, { untilListening: false });
    if (env.DATABASE_URL) {
      await server.waitForLine((line) => line.role === 'primary' && line.workers === 2);
      const listening = () => server.lines.filter((line) => typeof line.url === 'string').length;
      await server.waitForLine(() => listening() === 2);
    } else {
      // PGlite belongs to one process: one server, and the reason on stderr.
      await server.waitForLine((line) => typeof line.url === 'string');
      expect(server.stderr()).toContain('WEB_CONCURRENCY=2 ignored');
    }
    server.child.kill('SIGTERM');
    expect((await server.exited).code).toBe(0);
  });

  it('is JSON lines from the webhook worker too', async () => {
    const worker = await spawnServer(await databaseEnv(), { untilListening: false, script: WORKER });
    await worker.waitForLine((line) => line.msg === 'works-api webhook worker delivering');
    expect(worker.lines[0]).toMatchObject({ msg: 'works-api webhook worker starting', level: 'info' });
    worker.child.kill('SIGTERM');
    expect(await worker.exited).toEqual({ code: 0, signal: null });
  });
});

describe('LOG_FORMAT=pretty', () => {
  it('writes readable lines, and the start-up commands as a person pastes them', async () => {
    const child = spawn(process.execPath, [...TEST_NODE_ARGS, MAIN], {
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        ...(await databaseEnv()),
        PORT: '0',
        ADMIN_TOKEN,
        LOG_FORMAT: 'pretty',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString('utf8');
        if (stdout.includes('Create a user and an API key:\n') && stdout.endsWith('\n\n')) resolve();
      });
      void exited.then((code) => reject(new Error(`exited (${code}) before starting: ${stdout}`)));
    });
    const origin = /works-api {3}(http:\/\/127\.0\.0\.1:\d+)\/v1/.exec(stdout)![1];
    expect(stdout).toMatch(/^\[\d{2}:\d{2}:\d{2}\.\d{3}\] INFO: works-api starting\n/);
    expect(stdout).toContain(`  reference   ${origin}/docs\n  contract    ${origin}/openapi.yaml\n`);
    expect(stdout).toContain(
      `\n  curl -X POST ${origin}/v1/admin/users -H "Authorization: Bearer $ADMIN_TOKEN" -H "Content-Type: application/json" -d '{"email":"you@example.com","firstName":"Ada","lastName":"Lovelace"}'\n`,
    );
    expect(stdout.split('\n').filter((line) => line.startsWith('{'))).toEqual([]);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });

  it('is honoured by the webhook worker too', async () => {
    const child = spawn(process.execPath, [...TEST_NODE_ARGS, WORKER], {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...(await databaseEnv()), LOG_FORMAT: 'pretty' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString('utf8');
        if (stdout.includes('INFO: works-api webhook worker delivering\n')) resolve();
      });
      void exited.then((code) => reject(new Error(`exited (${code}) before starting: ${stdout}`)));
    });
    expect(stdout).toMatch(/^\[\d{2}:\d{2}:\d{2}\.\d{3}\] INFO: works-api webhook worker starting\n/);
    expect(stdout.split('\n').filter((line) => line.startsWith('{'))).toEqual([]);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
});
