import { OutboxLoop } from './outbox-loop';

// The loop's sleeps, nudge delays, stop timeouts and Date.now run on Jest's fake clock: each test moves time itself,
// so "not yet" and "at once" are exact (a minute's poll interval is a minute, not "still asleep after 20 ms") on any
// machine, however loaded, and no test waits real time.
beforeEach(() => jest.useFakeTimers());
afterEach(() => jest.useRealTimers());

/** Moves the clock by `ms`, running what falls due and every promise that settles meanwhile. */
const advance = (ms: number) => jest.advanceTimersByTimeAsync(ms);
/** Lets what is ready now run, without moving the clock. */
const settle = () => advance(0);

function loopWith(
  round: (loop: OutboxLoop) => Promise<boolean>,
  options: {
    nudgeDelayMs?: number;
    pollIntervalMs?: number;
    delayNudgesDuringRounds?: boolean;
    lookAgainOnlyWhenFull?: boolean;
  } = {},
) {
  const errors: Array<{ error: unknown; rounds: number; forMs: number }> = [];
  const resumed: Array<{ rounds: number; forMs: number }> = [];
  const loop: OutboxLoop = new OutboxLoop({
    pollIntervalMs: 60_000,
    maxInFlight: 2,
    ...options,
    round: () => round(loop),
    onRoundError: (error, failing) => errors.push({ error, ...failing }),
    onResumed: (failed) => resumed.push(failed),
  });
  return { loop, errors, resumed };
}

describe('OutboxLoop', () => {
  it('runs a round, sleeps until nudged or the poll interval is over, and runs again at once after a busy round', async () => {
    let rounds = 0;
    const { loop } = loopWith(async () => ++rounds < 3); // busy twice, then idle
    loop.start();
    await settle();
    expect(rounds).toBe(3); // no sleep after a busy round
    await advance(59_999);
    expect(rounds).toBe(3); // asleep: the poll interval is a minute
    loop.nudge();
    await settle();
    expect(rounds).toBe(4); // a nudge wakes it at once
    await advance(59_999);
    expect(rounds).toBe(4);
    await advance(1);
    expect(rounds).toBe(5); // and so does the end of the poll interval
    expect(await loop.stop(1000)).toBe(true);
  });

  it('coalesces the nudges of a burst into one round after the delay', async () => {
    let rounds = 0;
    const { loop } = loopWith(async () => (rounds++, false), { nudgeDelayMs: 30 });
    loop.start();
    await settle();
    expect(rounds).toBe(1); // and now asleep
    for (let i = 0; i < 5; i++) loop.nudge();
    await advance(29);
    expect(rounds).toBe(1); // the delay
    await advance(1);
    expect(rounds).toBe(2); // one round for the burst
    await advance(59_999);
    expect(rounds).toBe(2);
    await loop.stop(1000);
  });

  it('starts the next round at once after a nudge during a round, unless told to wait the delay then too', async () => {
    for (const delayNudgesDuringRounds of [false, true]) {
      let rounds = 0;
      const { loop } = loopWith(
        async (self) => {
          if (++rounds === 1) self.nudge(); // a commit while the round runs
          return false;
        },
        { nudgeDelayMs: 30, delayNudgesDuringRounds },
      );
      loop.start();
      await settle();
      if (delayNudgesDuringRounds) {
        expect(rounds).toBe(1);
        await advance(29);
        expect(rounds).toBe(1); // the batch window
        await advance(1);
      }
      expect(rounds).toBe(2);
      await advance(59_999);
      expect(rounds).toBe(2); // then asleep until the poll interval
      await loop.stop(1000);
    }
  });

  it('with lookAgainOnlyWhenFull, looks again when work ends only if the loop was full', async () => {
    const releases: Array<() => void> = [];
    let rounds = 0;
    const { loop } = loopWith(
      async (self) => {
        rounds++;
        while (self.free > 0 && releases.length < 3) self.track(new Promise<void>((resolve) => releases.push(resolve)));
        return false;
      },
      { lookAgainOnlyWhenFull: true },
    );
    loop.start();
    await settle();
    expect([rounds, loop.free]).toEqual([1, 0]); // two in flight (maxInFlight 2): full
    releases[0]!();
    await settle();
    expect(rounds).toBe(2); // room opened: it looks again, and takes the third
    releases[1]!();
    releases[2]!();
    await settle();
    expect(rounds).toBe(3); // the loop was full when the first of these ended, not when the second did
    await advance(59_999);
    expect(rounds).toBe(3);
    await loop.stop(1000);
  });

  it('counts tracked work against maxInFlight, looks again when it ends, and stop waits for it', async () => {
    let release!: () => void;
    const work = new Promise<void>((resolve) => (release = resolve));
    const free: number[] = [];
    const { loop } = loopWith(async (self) => {
      free.push(self.free);
      if (free.length === 1) self.track(work);
      return false;
    });
    loop.start();
    await settle();
    expect(free).toEqual([2]);
    expect(loop.free).toBe(1);
    release();
    await settle();
    expect(free).toEqual([2, 2]); // the work ended: a nudge, and room again
    const pending = new Promise<void>(() => undefined);
    loop.track(pending);
    expect(loop.free).toBe(1);
    const stopped = loop.stop(30);
    await advance(29);
    expect(loop.stopped).toBe(true);
    await advance(1);
    expect(await stopped).toBe(false); // what never ends is reported after the timeout, not waited for forever
  });

  it('reports a failed round and keeps going', async () => {
    let rounds = 0;
    const { loop, errors } = loopWith(async () => {
      rounds++;
      if (rounds === 1) throw new Error('database away');
      return false;
    });
    loop.start();
    await settle();
    expect(errors).toEqual([{ error: new Error('database away'), rounds: 1, forMs: 0 }]);
    loop.nudge();
    await settle();
    expect(rounds).toBe(2);
    await loop.stop(1000);
  });

  it('reports a run of failed rounds once a minute, polls on through it, and says when it resumed', async () => {
    // A failover: the database refuses every round for two and a half minutes, then answers again.
    let rounds = 0;
    const { loop, errors, resumed } = loopWith(
      async () => {
        rounds++;
        if (Date.now() - started < 150_000) throw new Error(`database away (${rounds})`);
        return false;
      },
      { pollIntervalMs: 10_000 },
    );
    const started = Date.now();
    loop.start();
    await advance(149_999);
    expect(rounds).toBe(15); // one every poll interval: at 0, 10 s, …, 140 s
    expect(resumed).toEqual([]);
    expect(errors).toEqual([
      { error: new Error('database away (1)'), rounds: 1, forMs: 0 },
      { error: new Error('database away (7)'), rounds: 7, forMs: 60_000 },
      { error: new Error('database away (13)'), rounds: 13, forMs: 120_000 },
    ]);
    await advance(1);
    expect(rounds).toBe(16); // at 150 s, the first that succeeds
    expect(resumed).toEqual([{ rounds: 15, forMs: 150_000 }]);
    await loop.stop(1000);
  });
});
