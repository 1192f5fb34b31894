import type { Options, Store } from 'express-rate-limit';
import {
  clusterRateLimits,
  type IpcChannel,
  type RateLimitAnswer,
  type RateLimitAsk,
  rateLimitCounters,
} from './cluster-rate-limit';

/** A worker's end of the channel, wired to `primary` the way cluster IPC is: asynchronous, answers by message. */
function channelTo(
  primary: ReturnType<typeof rateLimitCounters> | undefined,
  sent: RateLimitAsk[] = [],
): IpcChannel & { deliver(message: unknown): void } {
  const listeners: Array<(message: unknown) => void> = [];
  const deliver = (message: unknown) => listeners.forEach((listener) => listener(message));
  return {
    deliver,
    send(message, callback) {
      sent.push(message);
      setImmediate(() => {
        callback(null);
        void primary?.answer(structuredClone(message))?.then((answer) => deliver(structuredClone(answer)));
      });
    },
    onMessage: (listener) => listeners.push(listener),
  };
}

const init = async (store: Store, windowMs = 60_000) => {
  await store.init?.({ windowMs } as Options);
};

describe('rate-limit counters in the cluster primary', () => {
  let primary: ReturnType<typeof rateLimitCounters>;
  beforeEach(() => (primary = rateLimitCounters()));
  afterEach(() => primary.shutdown());

  it('counts one budget for every worker that asks', async () => {
    const [a, b] = [
      clusterRateLimits({ channel: channelTo(primary) }),
      clusterRateLimits({ channel: channelTo(primary) }),
    ];
    const [storeA, storeB] = [a.store('rl:'), b.store('rl:')];
    await init(storeA);
    await init(storeB);
    const before = Date.now();
    const hits = [];
    for (const store of [storeA, storeB, storeA, storeB]) hits.push((await store.increment('user:1')).totalHits);
    expect(hits).toEqual([1, 2, 3, 4]);
    const info = await storeB.get!('user:1');
    expect(info?.totalHits).toBe(4);
    // The window's end is the primary's, the same for both workers: one minute after the first hit.
    expect(info?.resetTime?.getTime()).toBeGreaterThanOrEqual(before + 60_000);
    expect(info?.resetTime?.getTime()).toBeLessThanOrEqual(Date.now() + 60_000);
    expect(a.pending + b.pending).toBe(0);
  });

  it('keeps each limiter and each key apart, and answers get, decrement and resets', async () => {
    const worker = clusterRateLimits({ channel: channelTo(primary) });
    const users = worker.store('rl:');
    const addresses = worker.store('rl-unauth:');
    await init(users);
    await init(addresses);
    await users.increment('k');
    await users.increment('k');
    await users.increment('other');
    expect((await addresses.increment('k')).totalHits).toBe(1);
    expect(await addresses.get!('nobody')).toBeUndefined();
    await users.decrement('k');
    expect((await users.get!('k'))?.totalHits).toBe(1);
    await users.resetKey('k');
    expect(await users.get!('k')).toBeUndefined();
    expect((await users.get!('other'))?.totalHits).toBe(1);
    await users.resetAll!();
    expect(await users.get!('other')).toBeUndefined();
    expect((await addresses.get!('k'))?.totalHits).toBe(1);
  });

  it("starts a new window once the limiter's window has passed", async () => {
    // The window passes on a fake clock (the channel's setImmediate stays real): no waiting on the wall clock.
    jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask'] });
    try {
      const worker = clusterRateLimits({ channel: channelTo(primary) });
      const store = worker.store('short:');
      await init(store, 50);
      expect((await store.increment('k')).totalHits).toBe(1);
      expect((await store.increment('k')).totalHits).toBe(2);
      jest.advanceTimersByTime(80);
      expect((await store.increment('k')).totalHits).toBe(1);
    } finally {
      jest.useRealTimers();
    }
  });

  it('ignores messages that are not rate-limit questions (the metrics and prom-client share the channel)', () => {
    for (const message of [
      { type: 'prom-client:getMetricsReq', requestId: 1 },
      { type: 'works-api:metrics?', id: 1 },
      { type: 'works-api:rate-limit?', id: 1, store: 'rl:', windowMs: 60_000, op: 'drop' },
      { type: 'works-api:rate-limit?', id: 1, store: 'rl:', windowMs: 60_000, op: 'increment' },
      { type: 'works-api:rate-limit?', id: 1, store: 'rl:', windowMs: 0, op: 'increment', key: 'k' },
      null,
      'works-api:rate-limit?',
    ])
      expect(primary.answer(message)).toBeUndefined();
  });

  it('answers with the id it was asked with', async () => {
    const ask = { type: 'works-api:rate-limit?', id: 41, store: 'rl:', windowMs: 60_000, op: 'increment', key: 'k' };
    expect(await primary.answer(ask)).toMatchObject({ type: 'works-api:rate-limit', id: 41, totalHits: 1 });
    expect(await primary.answer({ ...ask, id: 42 })).toMatchObject({ id: 42, totalHits: 2 });
  });
});

describe("a worker's questions", () => {
  it('fail after the timeout when the primary does not answer, and a late answer is dropped', async () => {
    const sent: RateLimitAsk[] = [];
    const channel = channelTo(undefined, sent);
    let failures = 0;
    const worker = clusterRateLimits({ channel, timeoutMs: 30, onFailure: () => failures++ });
    const store = worker.store('rl:');
    await init(store);
    const started = Date.now();
    await expect(store.increment('k')).rejects.toThrow('did not answer a rate-limit question within 30 ms');
    expect(Date.now() - started).toBeGreaterThanOrEqual(25);
    expect(failures).toBe(1);
    expect(worker.pending).toBe(0);
    // The answer arrives after all: nobody waits for it any more, nothing throws.
    channel.deliver({ type: 'works-api:rate-limit', id: sent[0]!.id, totalHits: 1 } satisfies RateLimitAnswer);
    expect(worker.pending).toBe(0);
  });

  it('fail at once when the channel is closed', async () => {
    let failures = 0;
    const worker = clusterRateLimits({
      channel: {
        send: (_message, callback) => callback(new Error('channel closed')),
        onMessage: () => undefined,
      },
      timeoutMs: 10_000,
      onFailure: () => failures++,
    });
    const store = worker.store('rl:');
    await expect(store.increment('k')).rejects.toThrow('channel closed');
    expect(failures).toBe(1);
    expect(worker.pending).toBe(0);
  });

  it('fail when the primary answers with an error, and match answers to questions by id, not by order', async () => {
    const sent: RateLimitAsk[] = [];
    const channel = channelTo(undefined, sent);
    const worker = clusterRateLimits({ channel, timeoutMs: 5_000 });
    const store = worker.store('rl:');
    await init(store);
    const first = store.increment('a');
    const second = store.increment('b');
    await new Promise((resolve) => setImmediate(resolve));
    const [askA, askB] = sent;
    expect(askA).toMatchObject({ type: 'works-api:rate-limit?', store: 'rl:', op: 'increment', key: 'a' });
    expect(askB?.id).not.toBe(askA?.id);
    channel.deliver({ type: 'works-api:rate-limit', id: askB!.id, totalHits: 7, resetTime: 1_000 });
    channel.deliver({ type: 'works-api:rate-limit', id: askA!.id, error: 'boom' });
    await expect(second).resolves.toEqual({ totalHits: 7, resetTime: new Date(1_000) });
    await expect(first).rejects.toThrow('the cluster primary could not count: boom');
    expect(worker.pending).toBe(0);
  });

  it("carry the limiter's window, so the primary counts in the same window", async () => {
    const sent: RateLimitAsk[] = [];
    const primary = rateLimitCounters();
    const worker = clusterRateLimits({ channel: channelTo(primary, sent) });
    const store = worker.store('rl:recipient-token:');
    await init(store, 30_000);
    const { resetTime } = await store.increment('hash');
    expect(sent[0]).toMatchObject({ windowMs: 30_000, store: 'rl:recipient-token:' });
    expect(resetTime!.getTime() - Date.now()).toBeLessThanOrEqual(30_000);
    expect(store.localKeys).toBe(false);
    primary.shutdown();
  });
});
