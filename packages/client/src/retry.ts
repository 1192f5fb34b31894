/** When and how the client tries a request again. */
export interface RetryOptions {
  /** Attempts in all, the first included (default 3; 1 turns retries off). */
  maxAttempts?: number;
  /** The first backoff; it doubles with every attempt (default 250 ms). */
  baseDelayMs?: number;
  /** No wait is longer: a `Retry-After` beyond it is not waited for and its response is returned (default 30 s). */
  maxDelayMs?: number;
  /** Waits between attempts; injectable so tests need not sleep. Rejects when the signal aborts. */
  sleep?: (ms: number, signal?: AbortSignal | null) => Promise<void>;
  /** A number in [0, 1) for the backoff's jitter (default Math.random). */
  random?: () => number;
  /** The current time in ms, to read a `Retry-After` date (default Date.now). */
  now?: () => number;
}

const RETRY_STATUSES = new Set([429, 503]);
const IDEMPOTENT_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']);

/**
 * Only requests that cannot do something twice are retried: idempotent methods, and POSTs that carry an
 * Idempotency-Key (the server replays the first response for a repeated key instead of creating again).
 */
export function isRetryable(request: Request): boolean {
  return (
    IDEMPOTENT_METHODS.has(request.method) || (request.method === 'POST' && request.headers.has('Idempotency-Key'))
  );
}

/** `Retry-After` as milliseconds to wait: delay-seconds or an HTTP date (RFC 9110 §10.2.3); undefined if absent or invalid. */
export function parseRetryAfter(value: string | null, now: number): number | undefined {
  if (value === null) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  if (!/^[A-Za-z]{3}/.test(trimmed)) return undefined; // an HTTP date starts with a day name
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

export const defaultSleep = (ms: number, signal?: AbortSignal | null): Promise<void> =>
  new Promise((resolve, reject) => {
    // An abort rejects with the signal's reason, as fetch does (an AbortError unless the caller gave another).
    // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });

/**
 * A network failure (connection refused or reset, DNS), as fetch reports it: a TypeError, not an abort. Checked by
 * name, as the error may come from another realm (a test sandbox, an iframe).
 */
const isNetworkError = (error: unknown): boolean =>
  typeof error === 'object' && error !== null && (error as { name?: unknown }).name === 'TypeError';

/**
 * Wraps fetch so that 429 and 503 answers and network errors are retried, for retryable requests only, with
 * exponential backoff and full jitter, honouring `Retry-After`.
 */
export function retryingFetch(
  fetchImpl: () => typeof globalThis.fetch,
  options: RetryOptions = {},
): (request: Request, init?: RequestInit) => Promise<Response> {
  const maxAttempts = Math.max(1, options.maxAttempts ?? 3);
  const baseDelayMs = options.baseDelayMs ?? 250;
  const maxDelayMs = options.maxDelayMs ?? 30_000;
  const sleep = options.sleep ?? defaultSleep;
  const random = options.random ?? Math.random;
  const now = options.now ?? Date.now;
  const backoff = (attempt: number) => Math.floor(random() * Math.min(maxDelayMs, baseDelayMs * 2 ** (attempt - 1)));

  return async (request, init) => {
    const retryable = maxAttempts > 1 && isRetryable(request);
    for (let attempt = 1; ; attempt += 1) {
      const last = !retryable || attempt >= maxAttempts;
      // A body can be read once: every attempt but the last sends a copy.
      const attemptRequest = last ? request : request.clone();
      let response: Response;
      try {
        response = await fetchImpl()(attemptRequest, init);
      } catch (error) {
        if (last || request.signal.aborted || !isNetworkError(error)) throw error;
        await sleep(backoff(attempt), request.signal);
        continue;
      }
      if (last || !RETRY_STATUSES.has(response.status)) return response;
      const retryAfter = parseRetryAfter(response.headers.get('Retry-After'), now());
      const delay = retryAfter ?? backoff(attempt);
      if (delay > maxDelayMs) return response;
      await response.body?.cancel().catch(() => undefined);
      await sleep(delay, request.signal);
    }
  };
}
