import path from 'node:path';
import { ConfigError, describeConfig, loadConfig, repoRoot, tracingSettings } from './config';

const KEYS = Buffer.alloc(32, 1).toString('base64');

describe('loadConfig', () => {
  it('has defaults that run on a fresh machine', () => {
    expect(loadConfig({})).toEqual({
      port: 3000,
      host: '127.0.0.1',
      database: { kind: 'pglite', dataDir: path.join(repoRoot, '.data/pglite') },
      adminToken: undefined,
      logLevel: 'info',
      logFormat: 'auto',
      limits: {
        apiKeysPerUser: 100,
        tenantsPerUser: 100,
        webhookEndpointsPerTenant: 20,
        invitationsPerTenant: 100,
        invitationTtlMs: 14 * 86_400_000,
        resendCooldownMs: 600_000,
        resendsPerRequest: 5,
        emailsPerRecipientPerDay: 20,
        emailsPerTenantPerDay: 1000,
        emailsPerAddressPerDay: 50,
        emailsPerSenderPerDay: 1000,
        answerLinkTtlMs: 30 * 86_400_000,
      },
      rateLimitPerMinute: 600,
      rateLimitUnauthenticatedPerMinute: 60,
      trustProxy: false,
      redis: undefined,
      corsOrigins: [],
      shutdownTimeoutMs: 10_000,
      idempotencyCleanupIntervalMs: 600_000,
      idempotencyLockTimeoutMs: 60_000,
      webhooks: {
        allowPrivateUrls: false,
        dispatcher: true,
        pollIntervalMs: 1000,
        maxInFlightPerTenant: 8,
        historyCleanupIntervalMs: 3_600_000,
      },
      mail: {
        devMailbox: true,
        from: 'works-api <no-reply@localhost>',
        publicUrl: 'http://localhost:3000',
        reminderBeforeMs: 86_400_000,
        sender: true,
        pollIntervalMs: 1000,
      },
      tracing: {
        enabled: false,
        description: 'off (set OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_TRACES_EXPORTER)',
        trustIncoming: false,
      },
      sessions: {
        signUp: 'open',
        signUpDefault:
          'open by default with the dev mailbox on (a local machine: sign-in links are printed in this log)',
        idleTimeoutMs: 86_400_000,
        lifetimeMs: 30 * 86_400_000,
        maxPerUser: 50,
        emailsPerAddressPerHour: 5,
        requestsPerClientPerHour: 60,
      },
    });
  });

  it('SIGNUP: invite unless the dev mailbox is on by default (a local machine), or as set', () => {
    expect(loadConfig({}).sessions.signUp).toBe('open');
    expect(loadConfig({ HOST: '0.0.0.0' }).sessions.signUp).toBe('invite');
    expect(loadConfig({ SMTP_URL: 'smtp://mail:587' }).sessions.signUp).toBe('invite');
    expect(loadConfig({ DEV_MAILBOX: 'true' }).sessions.signUp).toBe('invite');
    expect(loadConfig({ DATABASE_URL: 'postgres://db/x', ENCRYPTION_KEYS: KEYS }).sessions.signUp).toBe('invite');
    expect(loadConfig({ SIGNUP: 'closed' }).sessions).toMatchObject({ signUp: 'closed' });
    expect(loadConfig({ SIGNUP: 'closed' }).sessions.signUpDefault).toBeUndefined();
    expect(() => loadConfig({ SIGNUP: 'anyone' })).toThrow('SIGNUP must be one of invite, open, closed (got "anyone")');
    expect(() => loadConfig({ SESSION_IDLE_TIMEOUT: '1m' })).toThrow('SESSION_IDLE_TIMEOUT must be from 5m to 30d');
    expect(loadConfig({ SESSION_LIFETIME: '7d', SESSION_IDLE_TIMEOUT: '2h' }).sessions).toMatchObject({
      lifetimeMs: 7 * 86_400_000,
      idleTimeoutMs: 7_200_000,
    });
  });

  it('reads the mail settings, and never echoes SMTP_URL (it holds the password)', () => {
    expect(
      loadConfig({
        SMTP_URL: 'smtps://mailer:s3cret@smtp.example.com:465',
        MAIL_FROM: 'Works <works@example.com>',
        PUBLIC_URL: 'https://works.example.com/',
        REMINDER_BEFORE: '90m',
        MAIL_SENDER: 'false',
      }).mail,
    ).toEqual({
      smtpUrl: 'smtps://mailer:s3cret@smtp.example.com:465',
      devMailbox: false,
      from: 'Works <works@example.com>',
      publicUrl: 'https://works.example.com',
      reminderBeforeMs: 90 * 60_000,
      sender: false,
      pollIntervalMs: 1000,
    });
    expect(loadConfig({ REMINDER_BEFORE: '2d' }).mail.reminderBeforeMs).toBe(2 * 86_400_000);
    expect(() => loadConfig({ REMINDER_BEFORE: '24' })).toThrow('REMINDER_BEFORE must be a whole number followed by');
    expect(() => loadConfig({ REMINDER_BEFORE: '31d' })).toThrow('REMINDER_BEFORE must be from 1s to 30d');
    expect(() => loadConfig({ SMTP_URL: 'http://user:pw@mail' })).toThrow(
      'SMTP_URL must be an smtp:// or smtps:// URL',
    );
    expect(() => loadConfig({ SMTP_URL: 'http://user:pw@mail' })).not.toThrow(/pw/);
    const described = JSON.stringify(describeConfig(loadConfig({ SMTP_URL: 'smtp://u:s3cret@mail.example.com:2525' })));
    expect(described).toContain('SMTP at mail.example.com:2525');
    expect(described).not.toContain('s3cret');
  });

  it('keeps the dev mailbox on by default only with the embedded database, and says so at start-up', () => {
    const postgres = { DATABASE_URL: 'postgresql://db/works', ENCRYPTION_KEYS: KEYS };
    const mailOf = (env: NodeJS.ProcessEnv) => {
      const config = loadConfig(env);
      return [config.mail.devMailbox, describeConfig(config).mail.transport];
    };
    expect(mailOf({})).toEqual([
      true,
      expect.stringMatching(/^dev mailbox, on by default with the embedded database:/),
    ]);
    expect(mailOf({ DEV_MAILBOX: 'false' })).toEqual([false, expect.stringMatching(/^off: SMTP_URL is not set/)]);
    // A production deploy that forgot SMTP_URL: no live links in memory; the emails wait in the outbox.
    expect(mailOf(postgres)).toEqual([
      false,
      'off: SMTP_URL is not set and the dev mailbox is off (with DATABASE_URL it needs DEV_MAILBOX=true): emails wait in the outbox until SMTP_URL is set',
    ]);
    expect(mailOf({ ...postgres, DEV_MAILBOX: 'true' })).toEqual([
      true,
      expect.stringMatching(
        /^dev mailbox, on because DEV_MAILBOX=true: emails are kept in memory with their live links/,
      ),
    ]);
    expect(mailOf({ SMTP_URL: 'smtp://mail.example.com:2525' })).toEqual([false, 'SMTP at mail.example.com:2525']);
    expect(describeConfig(loadConfig(postgres)).mail.sender).toBe('off (nowhere to send)');
    expect(describeConfig(loadConfig({})).mail.sender).toBe('on, polling every 1000 ms');
    expect(() => loadConfig({ SMTP_URL: 'smtp://mail.example.com', DEV_MAILBOX: 'true' })).toThrow(
      'DEV_MAILBOX=true and SMTP_URL exclude each other',
    );
    expect(() => loadConfig({ DEV_MAILBOX: 'yes' })).toThrow('DEV_MAILBOX must be true or false (got "yes")');
  });

  it('keeps the default dev mailbox off when the server is exposed (a host other than loopback, or NODE_ENV=production), and says why', () => {
    const mailOf = (env: NodeJS.ProcessEnv) => {
      const config = loadConfig(env);
      return [config.mail.devMailbox, describeConfig(config).mail.transport];
    };
    // The README's first command: loopback, no NODE_ENV.
    for (const host of ['127.0.0.1', 'localhost', '::1', '127.0.0.2', '::ffff:127.0.0.1'])
      expect(mailOf({ HOST: host })).toEqual([true, expect.stringMatching(/^dev mailbox, on by default/)]);
    expect(mailOf({ NODE_ENV: 'development' })[0]).toBe(true);
    for (const [env, why] of [
      [{ HOST: '0.0.0.0' }, 'HOST=0.0.0.0 is not a loopback address'],
      [{ HOST: '::' }, 'HOST=:: is not a loopback address'],
      [{ HOST: '192.168.1.20' }, 'HOST=192.168.1.20 is not a loopback address'],
      [{ HOST: 'works.internal' }, 'HOST=works.internal is not a loopback address'],
      [{ NODE_ENV: 'production' }, 'NODE_ENV=production'],
    ] as const) {
      const config = loadConfig(env);
      expect(config.mail.devMailbox).toBe(false);
      expect(config.mail.devMailboxWithheld).toBe(why);
      expect(describeConfig(config).mail.transport).toBe(
        `off: the dev mailbox is not on by default because ${why} (members there would read recipients' live answer links): emails wait in the outbox until SMTP_URL is set; DEV_MAILBOX=true keeps them in the dev mailbox anyway`,
      );
      expect(describeConfig(config).mail.sender).toBe('off (nowhere to send)');
    }
    // Asked for explicitly, it is on wherever the server listens.
    expect(mailOf({ HOST: '0.0.0.0', NODE_ENV: 'production', DEV_MAILBOX: 'true' })).toEqual([
      true,
      expect.stringMatching(/^dev mailbox, on because DEV_MAILBOX=true/),
    ]);
    expect(loadConfig({ HOST: '0.0.0.0', DEV_MAILBOX: 'true' }).mail.devMailboxWithheld).toBeUndefined();
    expect(loadConfig({ HOST: '0.0.0.0', DEV_MAILBOX: 'false' }).mail.devMailboxWithheld).toBeUndefined();
    expect(
      loadConfig({ HOST: '0.0.0.0', SMTP_URL: 'smtp://mail.example.com' }).mail.devMailboxWithheld,
    ).toBeUndefined();
  });

  it('reads INVITATION_TTL (14 days by default) between an hour and 90 days', () => {
    expect(loadConfig({}).limits.invitationTtlMs).toBe(14 * 86_400_000);
    expect(loadConfig({ INVITATION_TTL: '36h' }).limits.invitationTtlMs).toBe(36 * 3_600_000);
    expect(() => loadConfig({ INVITATION_TTL: '59m' })).toThrow('INVITATION_TTL must be from 1h to 90d (got "59m")');
    expect(() => loadConfig({ INVITATION_TTL: '91d' })).toThrow('INVITATION_TTL must be from 1h to 90d');
    expect(() => loadConfig({ INVITATION_TTL: '14' })).toThrow('INVITATION_TTL must be a whole number followed by');
  });

  it('makes answer links expire after ANSWER_LINK_TTL: 30 days by default, an hour to a year', () => {
    expect(loadConfig({}).limits.answerLinkTtlMs).toBe(30 * 86_400_000);
    expect(loadConfig({ ANSWER_LINK_TTL: '365d' }).limits.answerLinkTtlMs).toBe(365 * 86_400_000);
    expect(() => loadConfig({ ANSWER_LINK_TTL: '30m' })).toThrow('ANSWER_LINK_TTL must be from 1h to 365d (got "30m")');
    expect(() => loadConfig({ ANSWER_LINK_TTL: '366d' })).toThrow('ANSWER_LINK_TTL must be from 1h to 365d');
  });

  it('bounds the email caps: resends (cooldown, count) and daily emails per address and per tenant', () => {
    expect(() => loadConfig({ RESEND_COOLDOWN: '0s' })).toThrow('RESEND_COOLDOWN must be from 1s to 1d (got "0s")');
    expect(() => loadConfig({ RESEND_COOLDOWN: '25h' })).toThrow('RESEND_COOLDOWN must be from 1s to 1d');
    expect(() => loadConfig({ MAX_RESENDS_PER_REQUEST: '1001' })).toThrow(
      'MAX_RESENDS_PER_REQUEST must be a whole number from 0 to 1000',
    );
    expect(() => loadConfig({ MAX_EMAILS_PER_RECIPIENT_PER_DAY: '0' })).toThrow(
      'MAX_EMAILS_PER_RECIPIENT_PER_DAY must be a whole number from 1 to 100000',
    );
    expect(() => loadConfig({ MAX_EMAILS_PER_TENANT_PER_DAY: '-5' })).toThrow(
      'MAX_EMAILS_PER_TENANT_PER_DAY must be a whole number from 1 to 10000000',
    );
  });

  it('reads every variable, and treats an empty one as unset', () => {
    const config = loadConfig({
      PORT: '8080',
      HOST: '0.0.0.0',
      DATABASE_URL: 'postgresql://app:pw@db:5432/works',
      ENCRYPTION_KEYS: KEYS,
      ADMIN_TOKEN: 'a-long-operator-token',
      LOG_LEVEL: 'warn',
      LOG_FORMAT: 'json',
      RATE_LIMIT_PER_MINUTE: '0',
      MAX_API_KEYS_PER_USER: '5',
      MAX_TENANTS_PER_USER: '7',
      MAX_WEBHOOK_ENDPOINTS_PER_TENANT: '3',
      MAX_INVITATIONS_PER_TENANT: '4',
      INVITATION_TTL: '3d',
      RESEND_COOLDOWN: '30m',
      MAX_RESENDS_PER_REQUEST: '0',
      MAX_EMAILS_PER_RECIPIENT_PER_DAY: '3',
      MAX_EMAILS_PER_TENANT_PER_DAY: '50000',
      MAX_EMAILS_PER_ADDRESS_PER_DAY: '30',
      MAX_EMAILS_PER_SENDER_PER_DAY: '2500',
      ANSWER_LINK_TTL: '7d',
      REDIS_URL: 'rediss://:pw@cache:6380/2',
      REDIS_PREFIX: 'prod:',
      CORS_ORIGINS: ' https://app.example.com ,http://localhost:5173,',
      SHUTDOWN_TIMEOUT_MS: '30000',
      PGLITE_DIR: '',
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      WEBHOOK_DISPATCHER: 'false',
      WEBHOOK_POLL_INTERVAL_MS: '250',
      IDEMPOTENCY_CLEANUP_INTERVAL_MS: '1000',
      IDEMPOTENCY_LOCK_TIMEOUT_MS: '5000',
      WEBHOOK_HISTORY_CLEANUP_INTERVAL_MS: '2000',
    });
    expect(config).toMatchObject({
      port: 8080,
      host: '0.0.0.0',
      database: { kind: 'postgres', url: 'postgresql://app:pw@db:5432/works', statementTimeoutMs: 5000 },
      logLevel: 'warn',
      logFormat: 'json',
      rateLimitPerMinute: 0,
      limits: {
        apiKeysPerUser: 5,
        tenantsPerUser: 7,
        webhookEndpointsPerTenant: 3,
        invitationsPerTenant: 4,
        invitationTtlMs: 3 * 86_400_000,
        resendCooldownMs: 30 * 60_000,
        resendsPerRequest: 0,
        emailsPerRecipientPerDay: 3,
        emailsPerTenantPerDay: 50_000,
        emailsPerAddressPerDay: 30,
        emailsPerSenderPerDay: 2500,
        answerLinkTtlMs: 7 * 86_400_000,
      },
      redis: { url: 'rediss://:pw@cache:6380/2', prefix: 'prod:' },
      corsOrigins: ['https://app.example.com', 'http://localhost:5173'],
      shutdownTimeoutMs: 30_000,
      idempotencyCleanupIntervalMs: 1000,
      idempotencyLockTimeoutMs: 5000,
      webhooks: {
        allowPrivateUrls: true,
        dispatcher: false,
        pollIntervalMs: 250,
        maxInFlightPerTenant: 8,
        historyCleanupIntervalMs: 2000,
      },
    });
  });

  it('cuts off database statements after DATABASE_STATEMENT_TIMEOUT_MS (5 s by default, 0 for none)', () => {
    const url = 'postgresql://db/works';
    expect(loadConfig({ DATABASE_URL: url, ENCRYPTION_KEYS: KEYS }).database).toMatchObject({
      kind: 'postgres',
      url,
      statementTimeoutMs: 5000,
    });
    expect(
      loadConfig({ DATABASE_URL: url, ENCRYPTION_KEYS: KEYS, DATABASE_STATEMENT_TIMEOUT_MS: '0' }).database,
    ).toMatchObject({
      statementTimeoutMs: 0,
    });
    expect(() => loadConfig({ DATABASE_STATEMENT_TIMEOUT_MS: '-1' })).toThrow(
      'DATABASE_STATEMENT_TIMEOUT_MS must be a whole number from 0 to 3600000 (got "-1")',
    );
    expect(describeConfig(loadConfig({ DATABASE_URL: url, ENCRYPTION_KEYS: KEYS })).statementTimeout).toBe('5000 ms');
    expect(describeConfig(loadConfig({})).statementTimeout).toBe('not enforced by the embedded PGlite');
  });

  it('takes TRUST_PROXY as false, a hop count or the proxies, never true', () => {
    expect(loadConfig({ TRUST_PROXY: '1' }).trustProxy).toBe(1);
    expect(loadConfig({ TRUST_PROXY: 'loopback, 10.0.0.0/8' }).trustProxy).toEqual(['loopback', '10.0.0.0/8']);
    expect(() => loadConfig({ TRUST_PROXY: 'true' })).toThrow('TRUST_PROXY must name the proxies');
    expect(() => loadConfig({ TRUST_PROXY: 'proxy.internal' })).toThrow('TRUST_PROXY must be false, a number of hops');
  });

  it('keeps the idempotency lock time between a second and an hour', () => {
    expect(() => loadConfig({ IDEMPOTENCY_LOCK_TIMEOUT_MS: '999' })).toThrow(
      'IDEMPOTENCY_LOCK_TIMEOUT_MS must be a whole number from 1000 to 3600000 (got "999")',
    );
    expect(() => loadConfig({ IDEMPOTENCY_LOCK_TIMEOUT_MS: '3600001' })).toThrow(
      'IDEMPOTENCY_LOCK_TIMEOUT_MS must be a whole number from 1000 to 3600000 (got "3600001")',
    );
  });

  it('keeps the clean-up intervals between a second and a day', () => {
    expect(() => loadConfig({ IDEMPOTENCY_CLEANUP_INTERVAL_MS: '999' })).toThrow(
      'IDEMPOTENCY_CLEANUP_INTERVAL_MS must be a whole number from 1000 to 86400000 (got "999")',
    );
    expect(() => loadConfig({ WEBHOOK_HISTORY_CLEANUP_INTERVAL_MS: '86400001' })).toThrow(
      'WEBHOOK_HISTORY_CLEANUP_INTERVAL_MS must be a whole number from 1000 to 86400000 (got "86400001")',
    );
  });

  it('turns metrics on with a METRICS_TOKEN of at least 16 characters, never echoed', () => {
    expect(loadConfig({ METRICS_TOKEN: 'scrape-token-0123456789' }).metricsToken).toBe('scrape-token-0123456789');
    expect(() => loadConfig({ METRICS_TOKEN: 'short-secret' })).toThrow('METRICS_TOKEN must be at least 16 characters');
    expect(() => loadConfig({ METRICS_TOKEN: 'short-secret' })).not.toThrow(/short-secret/);
    expect(describeConfig(loadConfig({ METRICS_TOKEN: 'scrape-token-0123456789' })).metrics).not.toContain('scrape');
  });

  it('turns traces on only when the OTEL_* variables ask for them', () => {
    expect(tracingSettings({}).enabled).toBe(false);
    expect(tracingSettings({ OTEL_SERVICE_NAME: 'works' }).enabled).toBe(false);
    expect(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toEqual({
      enabled: true,
      description: 'otlp http/protobuf to http://collector:4318',
    });
    expect(
      tracingSettings({
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://user:secret@collector/v1/traces',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      }).description,
    ).toBe('otlp http/json to https://collector/v1/traces');
    expect(tracingSettings({ OTEL_TRACES_EXPORTER: 'console' })).toEqual({ enabled: true, description: 'console' });
    expect(
      tracingSettings({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }).enabled,
    ).toBe(false);
    expect(tracingSettings({ OTEL_SDK_DISABLED: 'true', OTEL_TRACES_EXPORTER: 'otlp' }).enabled).toBe(false);
  });

  it('continues an incoming traceparent only when TRUST_TRACEPARENT=true, and says which at start-up', () => {
    const otlp = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };
    expect(loadConfig(otlp).tracing.trustIncoming).toBe(false);
    expect(describeConfig(loadConfig(otlp)).traces).toBe(
      'otlp http/protobuf to http://collector:4318; an incoming traceparent is linked, not continued',
    );
    const trusted = loadConfig({ ...otlp, TRUST_TRACEPARENT: 'true' });
    expect(trusted.tracing.trustIncoming).toBe(true);
    expect(describeConfig(trusted).traces).toMatch(/; an incoming traceparent is continued \(TRUST_TRACEPARENT\)$/);
    expect(() => loadConfig({ TRUST_TRACEPARENT: 'yes' })).toThrow('TRUST_TRACEPARENT must be true or false');
  });

  it('takes only true or false for webhook switches', () => {
    expect(() => loadConfig({ WEBHOOK_ALLOW_PRIVATE_URLS: 'yes' })).toThrow(
      'WEBHOOK_ALLOW_PRIVATE_URLS must be true or false (got "yes")',
    );
  });

  it('throws one ConfigError naming every bad variable, never echoing a secret', () => {
    const attempt = () =>
      loadConfig({ PORT: '3000x', REDIS_URL: 'memcached://:pw-secret@x', ADMIN_TOKEN: 'short-secret' });
    expect(attempt).toThrow(ConfigError);
    expect(attempt).toThrow(
      'PORT must be a whole number from 0 to 65535 (got "3000x"); ADMIN_TOKEN must be at least 16 characters; REDIS_URL must be a redis:// or rediss:// URL',
    );
  });
});

describe('ENCRYPTION_KEYS', () => {
  it('is required with PostgreSQL, optional with the embedded database, and never echoed', () => {
    expect(() => loadConfig({ DATABASE_URL: 'postgresql://db/works' })).toThrow(
      'ENCRYPTION_KEYS is required with DATABASE_URL',
    );
    expect(loadConfig({}).database).not.toHaveProperty('encryptionKeys');
    const keys = loadConfig({ ENCRYPTION_KEYS: `${KEYS},${KEYS}` }).database.encryptionKeys;
    expect(keys?.map((key) => key.length)).toEqual([32, 32]);
    let message = '';
    try {
      loadConfig({ ENCRYPTION_KEYS: 'c2hvcnQta2V5' });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toContain('ENCRYPTION_KEYS key 1 is not 32 bytes in base64');
    expect(message).not.toContain('c2hvcnQta2V5');
  });
});

describe('describeConfig', () => {
  it('summarises the configuration without passwords or tokens', () => {
    const summary = describeConfig(
      loadConfig({
        DATABASE_URL: 'postgresql://app:db-secret@db.internal:5433/works',
        ENCRYPTION_KEYS: KEYS,
        REDIS_URL: 'redis://user:redis-secret@cache.internal:6379',
        ADMIN_TOKEN: 'operator-secret-token',
      }),
    );
    expect(summary).toMatchObject({
      database: 'PostgreSQL at db.internal:5433/works',
      adminRoutes: 'on',
      rateLimit:
        '600 requests per minute per user, 60 failed authentications per minute per client address, counted in Redis at cache.internal:6379 (prefix works-api:)',
    });
    expect(JSON.stringify(summary)).not.toMatch(/secret/);
  });
});
