/**
 * The loop of an outbox worker (the webhook dispatcher, the mail sender): run a round, then sleep for the poll
 * interval, unless the round was busy (there may be more to take at once) or a nudge came meanwhile (a commit that
 * queued work, a finished piece of work). What a round starts runs in the background (`track`), at most
 * `maxInFlight` at once; `stop` ends the loop and waits for it.
 */
export interface OutboxLoopOptions {
  /** Without a nudge, how often to look again (retries, and rows other processes wrote). */
  pollIntervalMs: number;
  maxInFlight: number;
  /** A nudge waits this long before waking the loop, so that a burst of commits makes one round. */
  nudgeDelayMs?: number;
  /** One round; resolves true when it was busy. It reads `free` to know how much it may start. */
  round: () => Promise<boolean>;
  /** A round that threw (the database may be briefly away): the loop tries again at the next poll. */
  onRoundError: (error: unknown) => void;
}

export class OutboxLoop {
  private readonly inFlight = new Set<Promise<void>>();
  private running: Promise<void> | undefined;
  private stopping = false;
  private wake: (() => void) | undefined;
  private nudged = false;
  private nudgeTimer: NodeJS.Timeout | undefined;

  constructor(private readonly options: OutboxLoopOptions) {}

  /** True once `stop` was called: a round takes nothing new. */
  get stopped(): boolean {
    return this.stopping;
  }

  /** How many more pieces of work may start now. */
  get free(): number {
    return this.options.maxInFlight - this.inFlight.size;
  }

  start(): void {
    this.running = this.run();
  }

  /** Look again now: at once, or after the nudge delay; a nudge during a round makes the next one start at once. */
  nudge(): void {
    this.nudged = true;
    if (!this.wake) return;
    if (!this.options.nudgeDelayMs) return this.wake();
    if (this.nudgeTimer) return;
    this.nudgeTimer = setTimeout(() => {
      this.nudgeTimer = undefined;
      this.wake?.();
    }, this.options.nudgeDelayMs);
  }

  /** Runs `work` in the background, counted in flight; when it ends, the loop looks again. */
  track(work: Promise<void>): void {
    const tracked = work.finally(() => {
      this.inFlight.delete(tracked);
      this.nudge();
    });
    this.inFlight.add(tracked);
  }

  /** Resolves when every piece of work in flight now has ended. */
  async settled(): Promise<void> {
    await Promise.all(this.inFlight);
  }

  /** Ends the loop and waits (up to `timeoutMs`) for the work in flight: true when it all ended in time. */
  async stop(timeoutMs: number): Promise<boolean> {
    this.stopping = true;
    clearTimeout(this.nudgeTimer);
    this.wake?.();
    await this.running;
    let timer: NodeJS.Timeout | undefined;
    const inTime = await Promise.race([
      this.settled().then(() => true),
      new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs))),
    ]);
    clearTimeout(timer);
    return inTime;
  }

  private async run(): Promise<void> {
    while (!this.stopping) {
      this.nudged = false;
      let busy = false;
      try {
        busy = await this.options.round();
      } catch (error) {
        this.options.onRoundError(error);
      }
      if (!busy && !this.nudged && !this.stopping) await this.sleep(this.options.pollIntervalMs);
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    }).then(() => {
      this.wake = undefined;
    });
  }
}
