import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import path from 'node:path';
import { z } from 'zod';
import { parseEncryptionKeys, SecretKeyError } from '@works-api/prisma/encryption-keys';
import { type DatabaseTarget, describeDatabase } from '@works-api/prisma/target';
import { DEFAULT_LIMITS, type Limits } from './domain/limits';

/** The repository root (packages/server/{src,dist}/ → ../../..). */
export const repoRoot = path.resolve(__dirname, '../../..');

import {
  DURATION_UNITS_MS,
  duration,
  durationBetween,
  flag,
  LOG_FORMATS,
  LOG_LEVELS,
  originList,
  SECRET_VARIABLES,
  trustProxy,
  urlWithScheme,
  wholeNumber,
} from './config-values';

import type { LogFormat, LogLevel } from './config-values';

export type { LogFormat, LogLevel };

import { describeSessions, type SessionSettings, sessionSettings, sessionVariables } from './config-sessions';

export { DEFAULT_SESSION_SETTINGS, type SessionSettings, type SignUpPolicy } from './config-sessions';

/** Every variable the server reads itself, with its check and default (docs/configuration.md lists them). */
export const environment = z.object({
  PORT: wholeNumber(0, 65535).default(3000),
  HOST: z.string().min(1).default('127.0.0.1'),
  DATABASE_URL: urlWithScheme(['postgres:', 'postgresql:'], 'must be a postgres:// or postgresql:// URL').optional(),
  DATABASE_STATEMENT_TIMEOUT_MS: wholeNumber(0, 3_600_000).default(5000),
  PGLITE_DIR: z.string().min(1).default(path.join(repoRoot, '.data/pglite')),
  ENCRYPTION_KEYS: z
    .string()
    .transform((value, context) => {
      try {
        return parseEncryptionKeys(value);
      } catch (error) {
        if (!(error instanceof SecretKeyError)) throw error;
        context.addIssue({ code: 'custom', message: error.message.replace(/^ENCRYPTION_KEYS:? ?/, '') });
        return z.NEVER;
      }
    })
    .optional(),
  ADMIN_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  LOG_LEVEL: z.enum(LOG_LEVELS, `must be one of ${LOG_LEVELS.join(', ')}`).default('info'),
  LOG_FORMAT: z.enum(LOG_FORMATS, `must be one of ${LOG_FORMATS.join(', ')}`).default('auto'),
  RATE_LIMIT_PER_MINUTE: wholeNumber(0, 1_000_000).default(600),
  RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE: wholeNumber(0, 1_000_000).default(60),
  TRUST_PROXY: trustProxy.default(false),
  MAX_API_KEYS_PER_USER: wholeNumber(1, 1_000_000).default(DEFAULT_LIMITS.apiKeysPerUser),
  MAX_TENANTS_PER_USER: wholeNumber(1, 1_000_000).default(DEFAULT_LIMITS.tenantsPerUser),
  MAX_WEBHOOK_ENDPOINTS_PER_TENANT: wholeNumber(1, 10_000).default(DEFAULT_LIMITS.webhookEndpointsPerTenant),
  MAX_INVITATIONS_PER_TENANT: wholeNumber(1, 10_000).default(DEFAULT_LIMITS.invitationsPerTenant),
  INVITATION_TTL: durationBetween('1h', '90d').default(DEFAULT_LIMITS.invitationTtlMs),
  RESEND_COOLDOWN: durationBetween('1s', '1d').default(DEFAULT_LIMITS.resendCooldownMs),
  MAX_RESENDS_PER_REQUEST: wholeNumber(0, 1000).default(DEFAULT_LIMITS.resendsPerRequest),
  MAX_EMAILS_PER_RECIPIENT_PER_DAY: wholeNumber(1, 100_000).default(DEFAULT_LIMITS.emailsPerRecipientPerDay),
  MAX_EMAILS_PER_TENANT_PER_DAY: wholeNumber(1, 10_000_000).default(DEFAULT_LIMITS.emailsPerTenantPerDay),
  MAX_EMAILS_PER_ADDRESS_PER_DAY: wholeNumber(1, 100_000).default(DEFAULT_LIMITS.emailsPerAddressPerDay),
  MAX_EMAILS_PER_SENDER_PER_DAY: wholeNumber(1, 10_000_000).default(DEFAULT_LIMITS.emailsPerSenderPerDay),
  ANSWER_LINK_TTL: durationBetween('1h', '365d').default(DEFAULT_LIMITS.answerLinkTtlMs),
  REDIS_URL: urlWithScheme(['redis:', 'rediss:'], 'must be a redis:// or rediss:// URL').optional(),
  REDIS_PREFIX: z.string().min(1).max(100, 'must be at most 100 characters').default('works-api:'),
  CORS_ORIGINS: originList.default([]),
  SHUTDOWN_TIMEOUT_MS: wholeNumber(0, 600_000).default(10_000),
  WEBHOOK_ALLOW_PRIVATE_URLS: flag.default(false),
  WEBHOOK_DISPATCHER: flag.default(true),
  WEBHOOK_POLL_INTERVAL_MS: wholeNumber(50, 600_000).default(1000),
  WEBHOOK_MAX_IN_FLIGHT_PER_TENANT: wholeNumber(1, 64).default(8),
  IDEMPOTENCY_CLEANUP_INTERVAL_MS: wholeNumber(1000, 86_400_000).default(600_000),
  IDEMPOTENCY_LOCK_TIMEOUT_MS: wholeNumber(1000, 3_600_000).default(60_000),
  WEBHOOK_HISTORY_CLEANUP_INTERVAL_MS: wholeNumber(1000, 86_400_000).default(3_600_000),
  METRICS_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  SMTP_URL: urlWithScheme(['smtp:', 'smtps:'], 'must be an smtp:// or smtps:// URL').optional(),
  MAIL_FROM: z.string().min(3).max(320).default('works-api <no-reply@localhost>'),
  PUBLIC_URL: z
    .string()
    .refine((value) => URL.canParse(value) && ['http:', 'https:'].includes(new URL(value).protocol), {
      message: 'must be an http:// or https:// URL',
    })
    .optional(),
  REMINDER_BEFORE: duration.default(24 * DURATION_UNITS_MS.h),
  MAIL_SENDER: flag.default(true),
  DEV_MAILBOX: flag.optional(),
  NODE_ENV: z.string().optional(),
  MAIL_POLL_INTERVAL_MS: wholeNumber(50, 600_000).default(1000),
  TRUST_TRACEPARENT: flag.default(false),
  ...sessionVariables,
});

export interface Config {
  port: number;
  host: string;
  database: DatabaseTarget;
  adminToken?: string;
  logLevel: LogLevel;
  logFormat: LogFormat;
  /** What one user or tenant may hold. */
  limits: Limits;
  /** Requests per minute per API key; 0 turns rate limiting off. */
  rateLimitPerMinute: number;
  /** Failed authentications per minute per client address before it is refused outright; 0 turns it off. */
  rateLimitUnauthenticatedPerMinute: number;
  /** Which proxies' X-Forwarded-For gives the client's address (Express's `trust proxy`); false: the peer's. */
  trustProxy: boolean | number | string[];
  /** Rate-limit counters live here when set, so every server process shares one budget per key. */
  redis?: { url: string; prefix: string };
  /** Browser origins allowed to call the API (CORS); empty: no CORS headers at all. */
  corsOrigins: string[];
  /** How long a SIGTERM/SIGINT waits for in-flight requests before cutting them off. */
  shutdownTimeoutMs: number;
  /** How often expired idempotency keys are deleted (each round in bounded batches). */
  idempotencyCleanupIntervalMs: number;
  /** How long a key stays in flight (409) before a retry may take it over from a request that died. */
  idempotencyLockTimeoutMs: number;
  webhooks: {
    /** Accept http and loopback/private addresses for webhook endpoints (local development and tests only). */
    allowPrivateUrls: boolean;
    /** Run the webhook dispatcher in this process (off: the API only, with `pnpm worker` delivering). */
    dispatcher: boolean;
    /** How often the dispatcher looks for due deliveries when nothing wakes it sooner. */
    pollIntervalMs: number;
    /** Attempts of one tenant in flight at once per dispatcher (of its 64), so one tenant cannot hold them all. */
    maxInFlightPerTenant: number;
    /** How often the dispatcher deletes delivery history past retention (each round in bounded batches). */
    historyCleanupIntervalMs: number;
  };
  /** GET /metrics answers (Prometheus text format) only when set, and only to `Authorization: Bearer <token>`. */
  metricsToken?: string;
  mail: {
    /** SMTP_URL: where emails go. */
    smtpUrl?: string;
    /**
     * Without SMTP_URL, keep emails in memory, live links included, for GET /dev/mailbox and the console (local
     * development): on by default with the embedded database only; with DATABASE_URL only when DEV_MAILBOX=true.
     * Without either, emails wait in the outbox until SMTP_URL is set.
     */
    devMailbox: boolean;
    /**
     * Why the dev mailbox, on by default with the embedded database, stays off: the server is exposed (HOST not
     * loopback, or NODE_ENV=production) and DEV_MAILBOX was not set. Said at start-up.
     */
    devMailboxWithheld?: string;
    /** DEV_MAILBOX=true: on because it was asked for (wherever the server listens). */
    devMailboxAsked?: true;
    from: string;
    /** Where recipients reach this service: answer links are `<publicUrl>/r/<token>`. */
    publicUrl: string;
    reminderBeforeMs: number;
    /** Run the mail sender in this process (off: `pnpm worker` sends). */
    sender: boolean;
    pollIntervalMs: number;
  };
  /** OpenTelemetry traces, as the standard OTEL_* variables ask (the SDK reads the rest of them itself). */
  tracing: TracingSettings;
  sessions: SessionSettings;
}

export interface TracingSettings {
  enabled: boolean;
  /** Where spans go, for the start-up line: `otlp http/protobuf to http://collector:4318`, or why they are off. */
  description: string;
  /**
   * TRUST_TRACEPARENT: an incoming `traceparent` is continued (the edge in front vets it); otherwise a request
   * starts a new trace that links the incoming one.
   */
  trustIncoming: boolean;
}

/**
 * Traces are off unless the OpenTelemetry variables ask for them: an exporter named in OTEL_TRACES_EXPORTER (other
 * than `none`), or an OTLP endpoint (OTEL_EXPORTER_OTLP_ENDPOINT or its _TRACES_ variant). The specification's
 * default exporter is OTLP to localhost:4318; we do not send there unasked, so a plain start costs nothing.
 * OTEL_SDK_DISABLED=true turns them off whatever else is set.
 */
export function tracingSettings(env: NodeJS.ProcessEnv): Omit<TracingSettings, 'trustIncoming'> {
  const value = (name: string) => env[name]?.trim() || undefined;
  if (value('OTEL_SDK_DISABLED')?.toLowerCase() === 'true')
    return { enabled: false, description: 'off (OTEL_SDK_DISABLED=true)' };
  const exporters = (value('OTEL_TRACES_EXPORTER') ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  const endpoint = value('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT') ?? value('OTEL_EXPORTER_OTLP_ENDPOINT');
  if (exporters.length === 1 && exporters[0] === 'none')
    return { enabled: false, description: 'off (OTEL_TRACES_EXPORTER=none)' };
  if (exporters.length === 0 && !endpoint)
    return { enabled: false, description: 'off (set OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_TRACES_EXPORTER)' };
  const protocol =
    value('OTEL_EXPORTER_OTLP_TRACES_PROTOCOL') ?? value('OTEL_EXPORTER_OTLP_PROTOCOL') ?? 'http/protobuf';
  const names = exporters.length === 0 ? ['otlp'] : exporters.filter((name) => name !== 'none');
  const where = endpoint ? ` to ${withoutCredentials(endpoint)}` : '';
  return {
    enabled: true,
    description: names.map((name) => (name === 'otlp' ? `otlp ${protocol}${where}` : name)).join(', '),
  };
}

const withoutCredentials = (url: string): string => {
  if (!URL.canParse(url)) return '(an endpoint that is not a URL)';
  const parsed = new URL(url);
  return `${parsed.protocol}//${parsed.host}${parsed.pathname === '/' ? '' : parsed.pathname}`;
};

/**
 * Reads and checks the environment once, at start-up; an empty variable counts as unset. Every problem is
 * reported in one line, without echoing secret values.
 */
export function loadConfig(env: NodeJS.ProcessEnv): Config {
  const present = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== ''));
  const parsed = environment.safeParse(present);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => {
      const name = String(issue.path[0] ?? 'environment');
      const value = present[name];
      const shown = value === undefined || SECRET_VARIABLES.has(name) ? '' : ` (got ${JSON.stringify(value)})`;
      return `${name} ${issue.message}${shown}`;
    });
    throw new ConfigError(problems.join('; '));
  }
  const vars = parsed.data;
  if (vars.DATABASE_URL && !vars.ENCRYPTION_KEYS)
    throw new ConfigError(
      'ENCRYPTION_KEYS is required with DATABASE_URL: it seals webhook secrets and stored replays (make one with: openssl rand -base64 32)',
    );
  const encryptionKeys = vars.ENCRYPTION_KEYS ? { encryptionKeys: vars.ENCRYPTION_KEYS } : {};
  if (vars.SMTP_URL && vars.DEV_MAILBOX === true)
    throw new ConfigError(
      'DEV_MAILBOX=true and SMTP_URL exclude each other: the dev mailbox keeps emails instead of sending them',
    );
  // Live answer links in memory are for a developer's machine: the embedded database's on loopback (README's two
  // commands), or a set-up that asks for it. A production deploy that forgot SMTP_URL keeps its emails queued.
  const withheld =
    !vars.SMTP_URL && vars.DEV_MAILBOX === undefined && !vars.DATABASE_URL
      ? exposure(vars.HOST, vars.NODE_ENV)
      : undefined;
  const devMailbox = !vars.SMTP_URL && (vars.DEV_MAILBOX ?? (!vars.DATABASE_URL && withheld === undefined));
  return {
    port: vars.PORT,
    host: vars.HOST,
    database: vars.DATABASE_URL
      ? {
          kind: 'postgres',
          url: vars.DATABASE_URL,
          statementTimeoutMs: vars.DATABASE_STATEMENT_TIMEOUT_MS,
          ...encryptionKeys,
        }
      : { kind: 'pglite', dataDir: path.resolve(vars.PGLITE_DIR), ...encryptionKeys },
    adminToken: vars.ADMIN_TOKEN,
    logLevel: vars.LOG_LEVEL,
    logFormat: vars.LOG_FORMAT,
    limits: {
      apiKeysPerUser: vars.MAX_API_KEYS_PER_USER,
      tenantsPerUser: vars.MAX_TENANTS_PER_USER,
      webhookEndpointsPerTenant: vars.MAX_WEBHOOK_ENDPOINTS_PER_TENANT,
      invitationsPerTenant: vars.MAX_INVITATIONS_PER_TENANT,
      invitationTtlMs: vars.INVITATION_TTL,
      resendCooldownMs: vars.RESEND_COOLDOWN,
      resendsPerRequest: vars.MAX_RESENDS_PER_REQUEST,
      emailsPerRecipientPerDay: vars.MAX_EMAILS_PER_RECIPIENT_PER_DAY,
      emailsPerTenantPerDay: vars.MAX_EMAILS_PER_TENANT_PER_DAY,
      emailsPerAddressPerDay: vars.MAX_EMAILS_PER_ADDRESS_PER_DAY,
      emailsPerSenderPerDay: vars.MAX_EMAILS_PER_SENDER_PER_DAY,
      answerLinkTtlMs: vars.ANSWER_LINK_TTL,
    },
    rateLimitPerMinute: vars.RATE_LIMIT_PER_MINUTE,
    rateLimitUnauthenticatedPerMinute: vars.RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE,
    trustProxy: vars.TRUST_PROXY,
    redis: vars.REDIS_URL ? { url: vars.REDIS_URL, prefix: vars.REDIS_PREFIX } : undefined,
    corsOrigins: vars.CORS_ORIGINS,
    shutdownTimeoutMs: vars.SHUTDOWN_TIMEOUT_MS,
    idempotencyCleanupIntervalMs: vars.IDEMPOTENCY_CLEANUP_INTERVAL_MS,
    idempotencyLockTimeoutMs: vars.IDEMPOTENCY_LOCK_TIMEOUT_MS,
    webhooks: {
      allowPrivateUrls: vars.WEBHOOK_ALLOW_PRIVATE_URLS,
      dispatcher: vars.WEBHOOK_DISPATCHER,
      pollIntervalMs: vars.WEBHOOK_POLL_INTERVAL_MS,
      maxInFlightPerTenant: vars.WEBHOOK_MAX_IN_FLIGHT_PER_TENANT,
      historyCleanupIntervalMs: vars.WEBHOOK_HISTORY_CLEANUP_INTERVAL_MS,
    },
    ...(vars.METRICS_TOKEN !== undefined && { metricsToken: vars.METRICS_TOKEN }),
    mail: {
      ...(vars.SMTP_URL !== undefined && { smtpUrl: vars.SMTP_URL }),
      devMailbox,
      ...(withheld !== undefined && { devMailboxWithheld: withheld }),
      ...(devMailbox && vars.DEV_MAILBOX === true && { devMailboxAsked: true as const }),
      from: vars.MAIL_FROM,
      publicUrl: (vars.PUBLIC_URL ?? `http://localhost:${vars.PORT}`).replace(/\/+$/, ''),
      reminderBeforeMs: vars.REMINDER_BEFORE,
      sender: vars.MAIL_SENDER,
      pollIntervalMs: vars.MAIL_POLL_INTERVAL_MS,
    },
    tracing: { ...tracingSettings(present), trustIncoming: vars.TRUST_TRACEPARENT },
    sessions: sessionSettings(vars, devMailbox),
  };
}

/**
 * Why a server is exposed beyond its own machine, or undefined: listening on a host that is not loopback (`0.0.0.0`,
 * `::`, a network address, a name that may resolve to one), or NODE_ENV=production. The dev mailbox is not on by
 * default there: its members would read recipients' live answer links and could answer as them.
 */
function exposure(host: string, nodeEnv: string | undefined): string | undefined {
  if (nodeEnv === 'production') return 'NODE_ENV=production';
  const name = host.toLowerCase().replace(/\.$/, '');
  if (name === 'localhost') return undefined;
  if (isIP(host) !== 0 && ipaddr.process(host).range() === 'loopback') return undefined;
  return `HOST=${host} is not a loopback address`;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Where Redis is, without credentials. */
export function describeRedis(url: string): string {
  const parsed = new URL(url);
  return `Redis at ${parsed.hostname}:${parsed.port || 6379}${parsed.pathname === '/' ? '' : parsed.pathname}`;
}

/** Where emails go, for the start-up line: SMTP, the dev mailbox (and why it is on), or nowhere yet. */
export function describeMailTransport(config: Pick<Config, 'mail'>): string {
  const { smtpUrl, devMailbox, devMailboxWithheld, devMailboxAsked } = config.mail;
  if (smtpUrl) return `SMTP at ${new URL(smtpUrl).hostname}:${new URL(smtpUrl).port || 'default port'}`;
  if (devMailboxWithheld)
    return `off: the dev mailbox is not on by default because ${devMailboxWithheld} (members there would read recipients' live answer links): emails wait in the outbox until SMTP_URL is set; DEV_MAILBOX=true keeps them in the dev mailbox anyway`;
  if (devMailbox)
    return `dev mailbox, ${devMailboxAsked ? 'on because DEV_MAILBOX=true' : 'on by default with the embedded database'}: emails are kept in memory with their live links, shown to the tenant's members in the console and at GET /dev/mailbox, never sent (for local development; set SMTP_URL to send)`;
  return 'off: SMTP_URL is not set and the dev mailbox is off (with DATABASE_URL it needs DEV_MAILBOX=true): emails wait in the outbox until SMTP_URL is set';
}

/** The configuration as the start-up log shows it: everything an operator needs to check, no secret. */
export function describeConfig(config: Config, { clustered = false }: { clustered?: boolean } = {}) {
  return {
    port: config.port,
    host: config.host,
    database: describeDatabase(config.database),
    statementTimeout:
      config.database.kind === 'pglite'
        ? 'not enforced by the embedded PGlite'
        : config.database.statementTimeoutMs
          ? `${config.database.statementTimeoutMs} ms`
          : 'off',
    adminRoutes: config.adminToken ? 'on' : 'off (ADMIN_TOKEN is not set)',
    rateLimit:
      config.rateLimitPerMinute === 0
        ? 'off'
        : `${config.rateLimitPerMinute} requests per minute per user, ${
            config.rateLimitUnauthenticatedPerMinute
          } failed authentications per minute per client address, counted ${
            config.redis
              ? `in ${describeRedis(config.redis.url)} (prefix ${config.redis.prefix})`
              : clustered
                ? "in the cluster's primary, for every worker"
                : 'in this process'
          }`,
    limits: config.limits,
    corsOrigins: config.corsOrigins,
    logLevel: config.logLevel,
    logFormat: config.logFormat,
    shutdownTimeoutMs: config.shutdownTimeoutMs,
    webhooks: {
      dispatcher: config.webhooks.dispatcher ? `on, polling every ${config.webhooks.pollIntervalMs} ms` : 'off',
      urls: config.webhooks.allowPrivateUrls
        ? 'http and private addresses allowed (WEBHOOK_ALLOW_PRIVATE_URLS)'
        : 'https, public addresses only',
    },
    mail: {
      transport: describeMailTransport(config),
      from: config.mail.from,
      links: `${config.mail.publicUrl}/r/…`,
      reminderBefore: `${config.mail.reminderBeforeMs / 1000} s`,
      sender: !config.mail.sender
        ? 'off'
        : config.mail.smtpUrl || config.mail.devMailbox
          ? `on, polling every ${config.mail.pollIntervalMs} ms`
          : 'off (nowhere to send)',
    },
    metrics: config.metricsToken
      ? 'GET /metrics, with the METRICS_TOKEN bearer token'
      : 'off (METRICS_TOKEN is not set)',
    sessions: describeSessions(config.sessions),
    traces: config.tracing.enabled
      ? `${config.tracing.description}; an incoming traceparent is ${
          config.tracing.trustIncoming ? 'continued (TRUST_TRACEPARENT)' : 'linked, not continued'
        }`
      : config.tracing.description,
  };
}
