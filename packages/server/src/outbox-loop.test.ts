import { OutboxLoop } from './outbox-loop';

const tick = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Waits until `check` holds (a loaded machine may take a while), failing after 5 s. */
async function until(check: () => boolean): Promise<void> {
  for (const started = Date.now(); !check(); await tick(5)) {
    if (Date.now() - started > 5000) throw new Error(`still not true: ${check.toString()}`);
  }
}

function loopWith(
  round: (loop: OutboxLoop) => Promise<boolean>,
  options: { nudgeDelayMs?: number; pollIntervalMs?: number } = {},
) {
  const errors: unknown[] = [];
  const resumed: Array<{ rounds: number; forMs: number }> = [];
  const loop: OutboxLoop = new OutboxLoop({
    pollIntervalMs: 60_000,
    maxInFlight: 2,
    ...options,
    round: () => round(loop),
    onRoundError: (error) => errors.push(error),
    onResumed: (failed) => resumed.push(failed),
  });
  return { loop, errors, resumed };
}

describe('OutboxLoop', () => {
  it('runs a round, sleeps until nudged, and runs again at once after a busy round', async () => {
    let rounds = 0;
    const { loop } = loopWith(async () => ++rounds < 3); // busy twice, then idle
    loop.start();
    await until(() => rounds === 3);
    await tick(20);
    expect(rounds).toBe(3); // asleep: the poll interval is a minute
    loop.nudge();
    await until(() => rounds === 4);
    expect(await loop.stop(1000)).toBe(true);
  });

  it('coalesces the nudges of a burst into one round after the delay', async () => {
    let rounds = 0;
    const { loop } = loopWith(async () => (rounds++, false), { nudgeDelayMs: 30 });
    loop.start();
    await until(() => rounds === 1);
    await tick(5); // into its sleep
    for (let i = 0; i < 5; i++) loop.nudge();
    await until(() => rounds === 2);
    await tick(60);
    expect(rounds).toBe(2);
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
    await until(() => free.length === 1);
    expect(loop.free).toBe(1);
    release();
    await until(() => free.length === 2);
    expect(free).toEqual([2, 2]); // the work ended: a nudge, and room again
    const pending = new Promise<void>(() => undefined);
    loop.track(pending);
    expect(loop.free).toBe(1);
    expect(await loop.stop(30)).toBe(false); // what never ends is reported, not waited for forever
    expect(loop.stopped).toBe(true);
  });

  it('reports a failed round and keeps going', async () => {
    let rounds = 0;
    const { loop, errors } = loopWith(async () => {
      rounds++;
      if (rounds === 1) throw new Error('database away');
      return false;
    });
    loop.start();
    await until(() => errors.length === 1);
    loop.nudge();
    await until(() => rounds === 2);
    expect(errors).toEqual([new Error('database away')]);
    await loop.stop(1000);
  });

  it('reports a run of failed rounds once, polls on through it, and says when it resumed', async () => {
    // A failover: the database refuses five rounds in a row, then answers again.
    let rounds = 0;
    const { loop, errors, resumed } = loopWith(
      async () => {
        rounds++;
        if (rounds <= 5) throw new Error(`database away (${rounds})`);
        return false;
      },
      { pollIntervalMs: 5 },
    );
    loop.start();
    await until(() => resumed.length === 1);
    expect(rounds).toBe(6);
    expect(errors).toEqual([new Error('database away (1)')]);
    expect(resumed).toEqual([{ rounds: 5, forMs: expect.any(Number) }]);
    await loop.stop(1000);
  });
});
