import path from 'node:path';
import { ConfigError, describeConfig, loadConfig, repoRoot, tracingSettings } from './config';

describe('loadConfig', () => {
  it('has defaults that run on a fresh machine', () => {
    expect(loadConfig({})).toEqual({
      port: 3000,
      host: '127.0.0.1',
      database: { kind: 'pglite', dataDir: path.join(repoRoot, '.data/pglite') },
      adminToken: undefined,
      logLevel: 'info',
      logFormat: 'auto',
      rateLimitPerMinute: 600,
      redis: undefined,
      corsOrigins: [],
      shutdownTimeoutMs: 10_000,
      idempotencyCleanupIntervalMs: 600_000,
      webhooks: {
        allowPrivateUrls: false,
        dispatcher: true,
        pollIntervalMs: 1000,
        historyCleanupIntervalMs: 3_600_000,
      },
      tracing: { enabled: false, description: 'off (set OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_TRACES_EXPORTER)' },
    });
  });

  it('reads every variable, and treats an empty one as unset', () => {
    const config = loadConfig({
      PORT: '8080',
      HOST: '0.0.0.0',
      DATABASE_URL: 'postgresql://app:pw@db:5432/works',
      ADMIN_TOKEN: 'a-long-operator-token',
      LOG_LEVEL: 'warn',
      LOG_FORMAT: 'json',
      RATE_LIMIT_PER_MINUTE: '0',
      REDIS_URL: 'rediss://:pw@cache:6380/2',
      REDIS_PREFIX: 'prod:',
      CORS_ORIGINS: ' https://app.example.com ,http://localhost:5173,',
      SHUTDOWN_TIMEOUT_MS: '30000',
      PGLITE_DIR: '',
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      WEBHOOK_DISPATCHER: 'false',
      WEBHOOK_POLL_INTERVAL_MS: '250',
      IDEMPOTENCY_CLEANUP_INTERVAL_MS: '1000',
      WEBHOOK_HISTORY_CLEANUP_INTERVAL_MS: '2000',
    });
    expect(config).toMatchObject({
      port: 8080,
      host: '0.0.0.0',
      database: { kind: 'postgres', url: 'postgresql://app:pw@db:5432/works' },
      logLevel: 'warn',
      logFormat: 'json',
      rateLimitPerMinute: 0,
      redis: { url: 'rediss://:pw@cache:6380/2', prefix: 'prod:' },
      corsOrigins: ['https://app.example.com', 'http://localhost:5173'],
      shutdownTimeoutMs: 30_000,
      idempotencyCleanupIntervalMs: 1000,
      webhooks: { allowPrivateUrls: true, dispatcher: false, pollIntervalMs: 250, historyCleanupIntervalMs: 2000 },
    });
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

describe('describeConfig', () => {
  it('summarises the configuration without passwords or tokens', () => {
    const summary = describeConfig(
      loadConfig({
        DATABASE_URL: 'postgresql://app:db-secret@db.internal:5433/works',
        REDIS_URL: 'redis://user:redis-secret@cache.internal:6379',
        ADMIN_TOKEN: 'operator-secret-token',
      }),
    );
    expect(summary).toMatchObject({
      database: 'PostgreSQL at db.internal:5433/works',
      adminRoutes: 'on',
      rateLimit: '600 requests per minute per API key, counted in Redis at cache.internal:6379 (prefix works-api:)',
    });
    expect(JSON.stringify(summary)).not.toMatch(/secret/);
  });
});
