import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { hostOf, type Lookup, resolveDeliveryAddress } from './addresses';

/** What one attempt came to, as the deliveries list shows it. */
export interface AttemptOutcome {
  ok: boolean;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  excerpt: string | null;
}

export interface SendOptions {
  allowPrivateUrls: boolean;
  lookup: Lookup;
  timeoutMs: number;
}

/** Bodies are read at most this far; only an excerpt is kept. */
export const MAX_RESPONSE_BYTES = 64 * 1024;
const EXCERPT_CHARACTERS = 500;

// Keep-alive connections per receiver: a busy endpoint gets its events over a few warm connections.
const agents = {
  'http:': new http.Agent({ keepAlive: true, maxSockets: 16 }),
  'https:': new https.Agent({ keepAlive: true, maxSockets: 16 }),
};

/**
 * POSTs one signed event. The host is resolved once and checked (public addresses only, unless allowed), and the
 * connection goes to exactly that address: no second lookup that a DNS rebinding could answer differently.
 * Redirects are not followed (a 3xx is a failed attempt); the whole attempt, the lookup included, is cut off after
 * `timeoutMs`; the response body is read up to 64 KiB and kept as a short excerpt. Never throws: every failure is
 * an outcome.
 */
export async function sendEvent(
  url: string,
  /** The signature headers (and `traceparent` when traces are on). */
  headers: Readonly<Record<string, string>>,
  body: string,
  options: SendOptions,
): Promise<AttemptOutcome> {
  const started = performance.now();
  const outcome = (fields: Omit<AttemptOutcome, 'durationMs'>): AttemptOutcome => ({
    ...fields,
    durationMs: Math.round(performance.now() - started),
  });
  const timedOut = `no response within ${options.timeoutMs / 1000} s`;
  let target: URL;
  let pinned: { address: string; family: 4 | 6 };
  // The host's lookup is part of the attempt: it counts against the same deadline, so a name server that never
  // answers holds a delivery slot for timeoutMs at most, like a receiver that never answers. At the deadline the
  // lookup is also told to stop (the c-ares resolver cancels its queries).
  const deadline = new AbortController();
  const lookupTimer = setTimeout(() => deadline.abort(), options.timeoutMs);
  try {
    target = new URL(url);
    const timedOutLookup = new Promise<never>((_, reject) => {
      deadline.signal.addEventListener('abort', () => reject(new Error(`${timedOut} (the host name's lookup)`)), {
        once: true,
      });
    });
    pinned = await Promise.race([
      resolveDeliveryAddress(target, options.allowPrivateUrls, options.lookup, deadline.signal),
      timedOutLookup,
    ]);
  } catch (error) {
    return outcome({ ok: false, statusCode: null, error: truncate((error as Error).message), excerpt: null });
  } finally {
    clearTimeout(lookupTimer);
  }
  const remainingMs = Math.max(1, options.timeoutMs - (performance.now() - started));
  const lookup: LookupFunction = (_host, lookupOptions, callback) =>
    lookupOptions.all
      ? (callback as unknown as (e: null, a: Array<{ address: string; family: number }>) => void)(null, [pinned])
      : callback(null, pinned.address, pinned.family);
  const transport = target.protocol === 'https:' ? https : http;
  return new Promise<AttemptOutcome>((resolve) => {
    let settled = false;
    const finish = (result: Omit<AttemptOutcome, 'durationMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(outcome(result));
    };
    const request = transport.request(
      {
        method: 'POST',
        protocol: target.protocol,
        hostname: hostOf(target),
        port: target.port || undefined,
        path: `${target.pathname}${target.search}`,
        agent: agents[target.protocol as 'http:' | 'https:'],
        lookup,
        headers: {
          'Content-Type': 'application/json',
          'Content-Length': Buffer.byteLength(body),
          'User-Agent': 'works-api-webhooks/1',
          ...headers,
        },
      },
      (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        const done = () => {
          const statusCode = response.statusCode ?? null;
          const ok = statusCode !== null && statusCode >= 200 && statusCode < 300;
          const text = Buffer.concat(chunks).toString('utf8');
          const excerpt = text === '' ? null : text.slice(0, EXCERPT_CHARACTERS);
          const error = ok
            ? null
            : statusCode !== null && statusCode >= 300 && statusCode < 400
              ? `HTTP ${statusCode}: redirects are not followed`
              : `HTTP ${statusCode}`;
          finish({ ok, statusCode, error, excerpt });
        };
        response.on('data', (chunk: Buffer) => {
          if (size >= MAX_RESPONSE_BYTES) return;
          chunks.push(chunk.subarray(0, MAX_RESPONSE_BYTES - size));
          size += chunk.length;
          // Enough read: stop the receiver from streaming more at us.
          if (size >= MAX_RESPONSE_BYTES) {
            done();
            response.destroy();
          }
        });
        response.on('end', done);
        response.on('error', done);
      },
    );
    const timer = setTimeout(() => {
      request.destroy();
      finish({ ok: false, statusCode: null, error: timedOut, excerpt: null });
    }, remainingMs);
    request.on('error', (error) =>
      finish({ ok: false, statusCode: null, error: truncate(error.message), excerpt: null }),
    );
    request.end(body);
  });
}

const truncate = (text: string): string => (text.length > 500 ? `${text.slice(0, 497)}...` : text);
