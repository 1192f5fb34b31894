import autocannon, { type Request } from 'autocannon';

export interface LoadOptions {
  url: string;
  requests: Request[];
  connections: number;
  durationS: number;
  /** Stop after this many responses (the run still ends after durationS). */
  amount?: number;
  /** Requests per second over all connections (for latency at a fixed load). */
  overallRate?: number;
}

export interface LoadResult {
  /** Completed responses. */
  requests: number;
  durationS: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  /** Socket errors, timeouts and non-2xx answers. */
  errors: number;
  statusCodes: Record<string, number>;
}

/** One autocannon run, bounded in time whatever happens. */
export function runLoad(options: LoadOptions): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: options.url,
        connections: options.connections,
        requests: options.requests,
        // With `amount` autocannon ignores `duration`; the timer below bounds the run instead.
        ...(options.amount === undefined ? { duration: options.durationS } : { amount: options.amount }),
        ...(options.overallRate !== undefined && { overallRate: options.overallRate }),
        timeout: 10,
      },
      (error, result) => {
        clearTimeout(timer);
        if (error) return reject(error instanceof Error ? error : new Error(String(error)));
        const statusCodes = Object.fromEntries(
          Object.entries(result.statusCodeStats ?? {}).map(([code, stats]) => [
            code,
            Number((stats as { count: number }).count),
          ]),
        );
        resolve({
          requests: result.requests.total,
          durationS: result.duration,
          rps: result.duration > 0 ? result.requests.total / result.duration : 0,
          p50Ms: result.latency.p50,
          p99Ms: result.latency.p99,
          errors: result.errors + result.timeouts + result.non2xx,
          statusCodes,
        });
      },
    );
    const timer = setTimeout(
      () => instance.stop(),
      (options.durationS + (options.amount === undefined ? 5 : 0)) * 1000,
    );
  });
}
