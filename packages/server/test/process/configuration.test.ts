import { databaseEnv, removeDataDirs, runUntilExit, spawnServer } from '../support/process';

/** Configuration is read and checked once at start-up: a bad value stops the process with one clear line. */

describe('a bad configuration value stops the server with one clear line', () => {
  it.each([
    ['PORT', 'abc', 'PORT must be a whole number from 0 to 65535 (got "abc")'],
    ['PORT', '70000', 'PORT must be a whole number from 0 to 65535 (got "70000")'],
    [
      'DATABASE_URL',
      'mysql://admin:hunter2@db.example.com/works',
      'DATABASE_URL must be a postgres:// or postgresql:// URL',
    ],
    ['DATABASE_URL', 'not a url', 'DATABASE_URL must be a postgres:// or postgresql:// URL'],
    ['RATE_LIMIT_PER_MINUTE', 'lots', 'RATE_LIMIT_PER_MINUTE must be a whole number from 0 to 1000000 (got "lots")'],
    ['RATE_LIMIT_PER_MINUTE', '-5', 'RATE_LIMIT_PER_MINUTE must be a whole number from 0 to 1000000 (got "-5")'],
    ['RATE_LIMIT_PER_MINUTE', '1.5', 'RATE_LIMIT_PER_MINUTE must be a whole number from 0 to 1000000 (got "1.5")'],
    ['REDIS_URL', 'http://:hunter2@cache.example.com', 'REDIS_URL must be a redis:// or rediss:// URL'],
    ['LOG_LEVEL', 'loud', 'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent (got "loud")'],
    ['CORS_ORIGINS', 'https://app.example.com/path', 'CORS_ORIGINS must be a comma-separated list of origins'],
    ['SHUTDOWN_TIMEOUT_MS', 'soon', 'SHUTDOWN_TIMEOUT_MS must be a whole number from 0 to 600000 (got "soon")'],
    ['ADMIN_TOKEN', 'hunter2', 'ADMIN_TOKEN must be at least 16 characters'],
  ])('%s=%s', async (name, value, message) => {
    const { code, stdout, stderr } = await runUntilExit({ [name]: value });
    expect(code).toBe(1);
    expect(stdout).toBe('');
    const lines = stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^works-api: invalid configuration: /);
    expect(lines[0]).toContain(message);
    expect(stderr).not.toContain('hunter2');
  });

  it('reports every bad value at once, still on one line', async () => {
    const { code, stderr } = await runUntilExit({ PORT: '-1', LOG_LEVEL: 'chatty' });
    expect(code).toBe(1);
    expect(stderr.trimEnd().split('\n')).toEqual([
      'works-api: invalid configuration: PORT must be a whole number from 0 to 65535 (got "-1"); LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent (got "chatty")',
    ]);
  });

  it('stops with one line when a configured service cannot be reached, without its credentials', async () => {
    const { code, stdout, stderr } = await runUntilExit({
      PGLITE_DIR: '/nonexistent-works-api/never-created',
      REDIS_URL: 'redis://:hunter2@127.0.0.1:1',
      DATABASE_URL: 'postgresql://postgres:hunter2@127.0.0.1:1/works',
    });
    expect(code).toBe(1);
    expect(stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(stderr).toMatch(/^works-api: cannot open the database: /);
    expect(stdout + stderr).not.toContain('hunter2');
  });
});

describe('start-up summary', () => {
  afterAll(removeDataDirs);

  it('logs the configuration it runs with, without secrets', async () => {
    const env: Record<string, string> = {
      ADMIN_TOKEN: 'hunter2-hunter2-hunter2',
      RATE_LIMIT_PER_MINUTE: '120',
      CORS_ORIGINS: 'https://app.example.com, http://localhost:5173',
      SHUTDOWN_TIMEOUT_MS: '2500',
    };
    const database = await databaseEnv();
    if (database.DATABASE_URL) {
      // Trust authentication ignores the password, so the server starts, and must still not print it.
      const url = new URL(database.DATABASE_URL);
      url.password = 'hunter2';
      database.DATABASE_URL = url.toString();
    }
    const server = await spawnServer({ ...env, ...database });
    server.child.kill('SIGTERM');
    expect(await server.exited).toEqual({ code: 0, signal: null });
    const starting = server.lines.find((line) => line.msg === 'works-api starting');
    expect(starting?.node).toBe(process.version);
    expect(starting?.config).toMatchObject({
      port: 0,
      host: '127.0.0.1',
      database: expect.stringMatching(/^(PostgreSQL at 127\.0\.0\.1:\d+\/\w+|embedded PGlite in \/)/),
      adminRoutes: 'on',
      rateLimit:
        '120 requests per minute per user, 60 failed authentications per minute per client address, counted in this process',
      corsOrigins: ['https://app.example.com', 'http://localhost:5173'],
      logLevel: 'info',
      shutdownTimeoutMs: 2500,
    });
    expect(JSON.stringify(server.lines)).not.toContain('hunter2');
  });
});

describe('the dev mailbox', () => {
  afterAll(removeDataDirs);

  /**
   * Whether GET /dev/mailbox exists (401 without a key) or not (404), what the start-up line says of mail, and the
   * start-up warnings.
   */
  async function mailboxOf(env: Record<string, string>) {
    const server = await spawnServer({ ...(await databaseEnv()), ...env });
    try {
      const status = (await fetch(`${server.baseUrl}/dev/mailbox`)).status;
      const starting = server.lines.find((line) => line.msg === 'works-api starting');
      const warnings = server.lines.filter((line) => line.level === 'warn').map((line) => String(line.msg));
      return { status, transport: (starting?.config as { mail: { transport: string } }).mail.transport, warnings };
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  }

  it('is on by default only on the embedded database; with DATABASE_URL only when DEV_MAILBOX=true, as the start-up line says', async () => {
    if ((await databaseEnv()).DATABASE_URL) {
      // A production deploy that forgot SMTP_URL hands no live answer link to anyone.
      expect(await mailboxOf({})).toMatchObject({
        status: 404,
        transport: expect.stringMatching(/^off: SMTP_URL is not set and the dev mailbox is off/),
      });
      expect(await mailboxOf({ DEV_MAILBOX: 'true' })).toMatchObject({
        status: 401,
        transport: expect.stringMatching(/^dev mailbox, on because DEV_MAILBOX=true/),
      });
    } else {
      // The README's first command: loopback, no NODE_ENV.
      expect(await mailboxOf({})).toEqual({
        status: 401,
        transport: expect.stringMatching(/^dev mailbox, on by default with the embedded database/),
        warnings: [],
      });
      expect(await mailboxOf({ DEV_MAILBOX: 'false' })).toMatchObject({
        status: 404,
        transport: expect.stringMatching(/^off: SMTP_URL is not set/),
      });
    }
  }, 60_000);

  it('stays off, and says so, on a server others can reach (NODE_ENV=production here) unless DEV_MAILBOX=true', async () => {
    // The same holds for a HOST that is not loopback (config.test.ts): not bound here, on a shared machine.
    const seen = await mailboxOf({ NODE_ENV: 'production' });
    expect(seen.status).toBe(404);
    if (!(await databaseEnv()).DATABASE_URL) {
      expect(seen.transport).toMatch(/^off: the dev mailbox is not on by default because NODE_ENV=production /);
      expect(seen.warnings).toContainEqual(
        expect.stringMatching(/^dev mailbox off: NODE_ENV=production, and there members would read/),
      );
    }
    // Asked for, it is on whatever the exposure.
    expect(await mailboxOf({ NODE_ENV: 'production', DEV_MAILBOX: 'true' })).toMatchObject({
      status: 401,
      transport: expect.stringMatching(/^dev mailbox, on because DEV_MAILBOX=true/),
    });
  }, 60_000);
});
