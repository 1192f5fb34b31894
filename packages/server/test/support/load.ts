/**
 * Bounded load for fault tests: `workers` loops, each sending one request after another, until `stop()` is
 * called or `maxMs` has passed (so a test that goes wrong still stops by itself). Loopback only.
 */
export interface Load<T> {
  /** Every outcome so far, in completion order. */
  readonly results: T[];
  /** Resolves once `predicate` holds for the outcomes so far (checked after each one), or rejects at the deadline. */
  until(predicate: (results: readonly T[]) => boolean): Promise<void>;
  /** Stops the loops and resolves when the requests in flight have finished. */
  stop(): Promise<T[]>;
}

export function startLoad<T>(
  workers: number,
  send: (worker: number, sequence: number) => Promise<T>,
  maxMs = 30_000,
): Load<T> {
  const results: T[] = [];
  const deadline = Date.now() + maxMs;
  let stopped = false;
  const waiters: Array<{ predicate: (results: readonly T[]) => boolean; resolve: () => void }> = [];
  const settle = () => {
    for (const waiter of [...waiters]) {
      if (waiter.predicate(results)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
    }
  };
  const loops = Array.from({ length: workers }, async (_, worker) => {
    for (let sequence = 0; !stopped && Date.now() < deadline; sequence++) {
      results.push(await send(worker, sequence));
      settle();
    }
  });
  const finished = Promise.all(loops).then(() => {
    stopped = true;
  });
  return {
    results,
    until(predicate) {
      if (predicate(results)) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        waiters.push({ predicate, resolve });
        void finished.then(() => {
          if (!predicate(results))
            reject(new Error(`the load ended (after ${results.length} requests) before the awaited condition held`));
        });
      });
    },
    async stop() {
      stopped = true;
      await finished;
      return results;
    },
  };
}

/**
 * Retries an assertion until it holds, or fails with its last error after `timeoutMs`; resolves to what the
 * assertion returned the time it held. Between tries it pauses `pauseMs` (another process or a socket is doing
 * the work), or with 0 only yields to the event loop (work done in this process, such as a dispatcher's). The one
 * way a test waits for something to happen: no test sleeps for a fixed time.
 */
export async function eventually<T = void>(
  assertion: () => Promise<T> | T,
  { timeoutMs = 10_000, pauseMs = 50 }: { timeoutMs?: number; pauseMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await assertion();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => (pauseMs > 0 ? setTimeout(resolve, pauseMs) : setImmediate(resolve)));
    }
  }
}
