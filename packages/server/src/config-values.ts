import { isIP } from 'node:net';
import { z } from 'zod';

/** The kinds of value a setting takes (config.ts): each parser says in its message what it accepts. */

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export const LOG_FORMATS = ['auto', 'json', 'pretty'] as const;
/** `auto`: readable lines when stdout is a terminal (a person is watching), JSON lines otherwise. */
export type LogFormat = (typeof LOG_FORMATS)[number];

/** Variables whose values are never echoed, not even in an error message. */
export const SECRET_VARIABLES = new Set([
  'DATABASE_URL',
  'REDIS_URL',
  'ADMIN_TOKEN',
  'METRICS_TOKEN',
  'SMTP_URL',
  'ENCRYPTION_KEYS',
]);

export const wholeNumber = (min: number, max: number) => {
  const message = `must be a whole number from ${min} to ${max}`;
  return z
    .string()
    .trim()
    .regex(/^\d{1,10}$/, message)
    .transform(Number)
    .refine((value) => value >= min && value <= max, message);
};

export const urlWithScheme = (schemes: string[], message: string) =>
  z.string().refine((value) => URL.canParse(value) && schemes.includes(new URL(value).protocol), { message });

/** `https://app.example.com,http://localhost:5173` → the exact origins a browser sends. */
export const originList = z
  .string()
  .transform((value) =>
    value
      .split(',')
      .map((origin) => origin.trim())
      .filter((origin) => origin !== ''),
  )
  .refine(
    (origins) => origins.every((origin) => URL.canParse(origin) && new URL(origin).origin === origin),
    'must be a comma-separated list of origins such as https://app.example.com (scheme, host and port only)',
  );

export const DURATION_UNITS_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
/** `90s`, `30m`, `24h`, `2d` → milliseconds, from `min` to `max` (written as such a duration). */
export const durationBetween = (min: `${number}${keyof typeof DURATION_UNITS_MS}`, max: typeof min) => {
  const ms = (value: string) =>
    Number(value.slice(0, -1)) * DURATION_UNITS_MS[value.slice(-1) as keyof typeof DURATION_UNITS_MS];
  return z
    .string()
    .trim()
    .regex(/^\d{1,6}[smhd]$/, 'must be a whole number followed by s, m, h or d (e.g. 24h)')
    .transform(ms)
    .refine((value) => value >= ms(min) && value <= ms(max), `must be from ${min} to ${max}`);
};
export const duration = durationBetween('1s', '30d');

/**
 * TRUST_PROXY: `false` (the connection's peer is the client), a number of proxy hops, or a comma-separated list of
 * the proxies' addresses or subnets (`loopback`, `linklocal`, `uniquelocal`, `10.0.0.0/8`, ...). Not `true`: that
 * would take any client's own X-Forwarded-For for its address, and let it pick a fresh budget per request.
 */
export const trustProxy = z
  .string()
  .trim()
  .refine((value) => value !== 'true', 'must name the proxies (addresses, subnets or a hop count), not true')
  .transform((value): boolean | number | string[] =>
    value === 'false' ? false : /^\d{1,2}$/.test(value) ? Number(value) : value.split(',').map((part) => part.trim()),
  )
  .refine(
    (value) =>
      typeof value !== 'object' ||
      value.every(
        (part) =>
          ['loopback', 'linklocal', 'uniquelocal'].includes(part) ||
          (isIP(part.split('/')[0] ?? '') !== 0 && /^[^/]+(\/\d{1,3})?$/.test(part)),
      ),
    'must be false, a number of hops, or a comma-separated list of addresses, subnets, loopback, linklocal or uniquelocal',
  );

export const flag = z.enum(['true', 'false'], 'must be true or false').transform((value) => value === 'true');
