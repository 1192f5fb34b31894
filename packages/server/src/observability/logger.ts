import pino, { type DestinationStream, type Logger } from 'pino';
import type { LogFormat, LogLevel } from '../config';

export type { Logger };

/**
 * Where a secret could end up in a log object, whatever logs it: API keys and tokens travel in `Authorization`,
 * created keys carry `secret`. The access log never logs headers or bodies at all; this is the safety net for
 * error lines and anything added later. Explicit paths only: a wildcard path more than doubles the cost of
 * every line, and the access log writes one per request.
 */
export const REDACTED_PATHS = [
  'authorization',
  'headers.authorization',
  'headers.cookie',
  'req.headers.authorization',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  'secret',
  'apiKey.secret',
  'body.secret',
  'body.apiKey.secret',
  'adminToken',
  'config.adminToken',
  'password',
  'token',
];

/**
 * JSON lines for machines (log shipping, `docker logs | jq`), readable lines for a person at a terminal: `auto`
 * picks by whether stdout is a TTY. Under `pnpm dev` stdout is piped through turbo, so its script asks for pretty.
 */
export function resolveLogFormat(format: LogFormat, stdoutIsTTY: boolean): 'json' | 'pretty' {
  if (format !== 'auto') return format;
  return stdoutIsTTY ? 'pretty' : 'json';
}

/** Readable lines on stdout (pino-pretty, synchronous like the JSON destination): time, level, message, fields. */
export function prettyStdout(
  colorize = Boolean(process.stdout.isTTY),
  destination: NodeJS.WritableStream | number = 1,
): DestinationStream {
  // Loaded only when asked for: a production process writing JSON never loads it.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const pretty = require('pino-pretty') as typeof import('pino-pretty');
  return pretty({ sync: true, colorize, destination, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' });
}

/** Structured logs, one object per line (pino), with secrets redacted: JSON, or pretty for a person. */
export function createLogger(level: LogLevel, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    // Synchronous writes to stdout: a line is out before the next statement runs (nothing to flush at exit,
    // which with pino's async default can spin forever on a closed pipe), and one small write per line is cheap.
    destination ?? pino.destination({ dest: 1, sync: true }),
  );
}

/** For code paths that must log but whose caller gave no logger (e.g. apps built by tools). */
export const silentLogger = (): Logger => pino({ level: 'silent' });
