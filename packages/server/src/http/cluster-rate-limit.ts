import cluster from 'node:cluster';
import { type ClientRateLimitInfo, MemoryStore, type Options, type Store } from 'express-rate-limit';
import type { Logger } from '../observability/logger';

/**
 * Rate-limit counters for WEB_CONCURRENCY without Redis. Each worker counting in its own memory would give every
 * budget N times over (the primary hands connections round-robin to N workers), so the counters live in the
 * cluster's primary, in express-rate-limit's own MemoryStore (one per limiter: the window arithmetic is not
 * copied), and the workers ask it over the cluster's IPC channel. Each question carries an id; the answer comes
 * back with it; a question not answered within `timeoutMs` fails.
 *
 * A failed question fails OPEN, as a failing Redis does (`passOnStoreError`): the request passes unlimited,
 * express-rate-limit logs the error and `onFailure` counts it (works_rate_limit_store_failures_total). The limit
 * protects the service from abuse; a stalled primary must not turn it into an outage of every authenticated
 * request. The messages' `type` (works-api:rate-limit…) keeps them apart from the metrics' (cluster-metrics.ts)
 * and prom-client's (prom-client:…), which listen on the same channel.
 */
const ASK = 'works-api:rate-limit?';
const ANSWER = 'works-api:rate-limit';
/** A round trip takes well under a millisecond (README); this long means the primary is stuck. */
export const CLUSTER_RATE_LIMIT_TIMEOUT_MS = 500;
/** The limiters are a fixed few (per user, per address, recipient links): a bound, not a configuration. */
const MAX_STORES = 32;

const OPERATIONS = ['get', 'increment', 'decrement', 'resetKey', 'resetAll'] as const;
type Operation = (typeof OPERATIONS)[number];

export interface RateLimitAsk {
  type: typeof ASK;
  id: number;
  /** Which limiter's counters (its prefix). */
  store: string;
  windowMs: number;
  op: Operation;
  key?: string;
}

export interface RateLimitAnswer {
  type: typeof ANSWER;
  id: number;
  /** For get and increment; absent from get's answer when the key has no count. */
  totalHits?: number;
  /** Epoch milliseconds. */
  resetTime?: number;
  error?: string;
}

const isAsk = (message: unknown): message is RateLimitAsk => {
  const ask = message as Partial<RateLimitAsk> | null;
  return (
    typeof ask === 'object' &&
    ask !== null &&
    ask.type === ASK &&
    typeof ask.id === 'number' &&
    typeof ask.store === 'string' &&
    typeof ask.windowMs === 'number' &&
    ask.windowMs > 0 &&
    OPERATIONS.includes(ask.op as Operation) &&
    (ask.op === 'resetAll' || typeof ask.key === 'string')
  );
};

const isAnswer = (message: unknown): message is RateLimitAnswer =>
  typeof message === 'object' &&
  message !== null &&
  (message as Partial<RateLimitAnswer>).type === ANSWER &&
  typeof (message as Partial<RateLimitAnswer>).id === 'number';

/**
 * The primary's side: the counters, one MemoryStore per limiter, made at its first question with the window the
 * worker's limiter was configured with. Returns undefined for a message that is not a rate-limit question.
 */
export function rateLimitCounters(): {
  answer(message: unknown): Promise<RateLimitAnswer> | undefined;
  shutdown(): void;
} {
  const stores = new Map<string, MemoryStore>();
  const storeFor = (name: string, windowMs: number): MemoryStore => {
    let store = stores.get(name);
    if (!store) {
      if (stores.size >= MAX_STORES) throw new Error(`more than ${MAX_STORES} rate-limit stores`);
      store = new MemoryStore();
      store.init({ windowMs } as Options);
      stores.set(name, store);
    }
    return store;
  };
  const answer = async (ask: RateLimitAsk): Promise<RateLimitAnswer> => {
    const reply = { type: ANSWER, id: ask.id } as const;
    try {
      const store = storeFor(ask.store, ask.windowMs);
      const key = ask.key ?? '';
      switch (ask.op) {
        case 'increment':
        case 'get': {
          const info = ask.op === 'increment' ? await store.increment(key) : await store.get(key);
          return info ? { ...reply, totalHits: info.totalHits, ...timeOf(info) } : reply;
        }
        case 'decrement':
          await store.decrement(key);
          return reply;
        case 'resetKey':
          await store.resetKey(key);
          return reply;
        case 'resetAll':
          await store.resetAll();
          return reply;
      }
    } catch (error) {
      return { ...reply, error: (error as Error).message };
    }
  };
  return {
    answer: (message) => (isAsk(message) ? answer(message) : undefined),
    shutdown: () => {
      for (const store of stores.values()) store.shutdown();
      stores.clear();
    },
  };
}

const timeOf = (info: ClientRateLimitInfo): { resetTime?: number } =>
  info.resetTime ? { resetTime: info.resetTime.getTime() } : {};

/** In the primary, when WEB_CONCURRENCY runs workers without REDIS_URL: answers the workers' rate-limit questions. */
export function serveClusterRateLimits(logger: Logger): void {
  const counters = rateLimitCounters();
  cluster.on('message', (worker, message: unknown) => {
    void counters.answer(message)?.then((reply) => {
      if (!worker.isConnected()) return;
      worker.send(reply, undefined, (error: Error | null) => {
        if (error) logger.warn({ err: error, worker: worker.process.pid }, 'rate limit: could not answer a worker');
      });
    });
  });
}

/** How a worker talks to the primary: process.send and process's 'message' events, or a test's stand-in. */
export interface IpcChannel {
  send(message: RateLimitAsk, callback: (error: Error | null) => void): void;
  onMessage(listener: (message: unknown) => void): void;
}

const processChannel: IpcChannel = {
  send(message, callback) {
    if (!process.send || !process.connected) {
      callback(new Error('the IPC channel to the cluster primary is closed'));
      return;
    }
    process.send(message, undefined, {}, callback);
  },
  onMessage(listener) {
    process.on('message', listener);
  },
};

export interface ClusterRateLimitOptions {
  channel?: IpcChannel;
  timeoutMs?: number;
  /** A question that failed (no answer in time, channel closed, the primary's error): the request passes. */
  onFailure?: () => void;
}

export interface ClusterRateLimits {
  /** A store for one limiter (express-rate-limit refuses a store shared by two); `name` keeps their counts apart. */
  store(name: string): Store;
  /** Questions waiting for their answer. */
  readonly pending: number;
}

/** In a worker: the stores whose counters live in the primary (one listener on the channel for all of them). */
export function clusterRateLimits({
  channel = processChannel,
  timeoutMs = CLUSTER_RATE_LIMIT_TIMEOUT_MS,
  onFailure,
}: ClusterRateLimitOptions = {}): ClusterRateLimits {
  let next = 0;
  const waiting = new Map<number, (answer: RateLimitAnswer | Error) => void>();
  channel.onMessage((message) => {
    if (!isAnswer(message)) return;
    const settle = waiting.get(message.id);
    // An answer that comes after its timeout finds no one waiting: dropped.
    if (settle) settle(message);
  });

  const ask = (question: Omit<RateLimitAsk, 'type' | 'id'>): Promise<RateLimitAnswer> =>
    new Promise((resolve, reject) => {
      const id = next++;
      const settle = (answer: RateLimitAnswer | Error) => {
        if (!waiting.delete(id)) return;
        clearTimeout(timer);
        const error =
          answer instanceof Error
            ? answer
            : answer.error !== undefined
              ? new Error(`the cluster primary could not count: ${answer.error}`)
              : undefined;
        if (error) {
          onFailure?.();
          reject(error);
        } else resolve(answer as RateLimitAnswer);
      };
      const timer = setTimeout(
        () => settle(new Error(`the cluster primary did not answer a rate-limit question within ${timeoutMs} ms`)),
        timeoutMs,
      );
      waiting.set(id, settle);
      try {
        channel.send({ type: ASK, id, ...question }, (error) => error && settle(error));
      } catch (error) {
        settle(error as Error);
      }
    });

  return {
    get pending() {
      return waiting.size;
    },
    store: (name) => new ClusterStore(name, ask),
  };
}

const infoOf = (answer: RateLimitAnswer): ClientRateLimitInfo => ({
  totalHits: answer.totalHits ?? 0,
  resetTime: answer.resetTime === undefined ? undefined : new Date(answer.resetTime),
});

/** express-rate-limit's Store, as the in-memory and Redis stores implement it, over `ask`. */
class ClusterStore implements Store {
  /** Counted in the primary: an increment here is seen by every worker. */
  readonly localKeys = false;
  readonly prefix: string;
  private windowMs = 60_000;

  constructor(
    private readonly name: string,
    private readonly ask: (question: Omit<RateLimitAsk, 'type' | 'id'>) => Promise<RateLimitAnswer>,
  ) {
    this.prefix = name;
  }

  init(options: Pick<Options, 'windowMs'>): void {
    this.windowMs = options.windowMs;
  }

  private question(op: Operation, key?: string) {
    return this.ask({ store: this.name, windowMs: this.windowMs, op, ...(key !== undefined && { key }) });
  }

  async get(key: string): Promise<ClientRateLimitInfo | undefined> {
    const answer = await this.question('get', key);
    return answer.totalHits === undefined ? undefined : infoOf(answer);
  }

  async increment(key: string): Promise<ClientRateLimitInfo> {
    return infoOf(await this.question('increment', key));
  }

  async decrement(key: string): Promise<void> {
    await this.question('decrement', key);
  }

  async resetKey(key: string): Promise<void> {
    await this.question('resetKey', key);
  }

  async resetAll(): Promise<void> {
    await this.question('resetAll');
  }
}
