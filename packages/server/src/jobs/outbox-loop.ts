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
  /**
   * With `nudgeDelayMs`: a nudge that came during a round (one that was not busy) also waits that long before the
   * next round, instead of starting it at once, so that a steady stream of commits makes rounds of `nudgeDelayMs`
   * worth of work, not a round for each commit or two (the mail sender: statements per email). Without it, only
   * a nudge to a sleeping loop waits.
   */
  delayNudgesDuringRounds?: boolean;
  /**
   * When a tracked piece of work ends, look again only if the loop was full (it may take more now); by default it
   * always looks again (the dispatcher: a delivered event makes the next one of its ordering key due). The mail
   * sender's emails depend on none another: a round that had room already took what was due.
   */
  lookAgainOnlyWhenFull?: boolean;
  /** One round; resolves true when it was busy. It reads `free` to know how much it may start. */
  round: () => Promise<boolean>;
  /**
   * A round threw (the database may be briefly away, failing over): the loop tries again at every poll. Called for
   * the first failure of a run of them, then at most once a minute while they go on, so that an outage is one line.
   */
  onRoundError: (error: unknown, failing: { rounds: number; forMs: number }) => void;
  /** The first round that succeeded after a run of failures. */
  onResumed?: (failed: { rounds: number; forMs: number }) => void;
}

/** While rounds keep failing, how often `onRoundError` hears of it again. */
const REPORT_FAILING_EVERY_MS = 60_000;

export class OutboxLoop {
  private readonly inFlight = new Set<Promise<void>>();
  private running: Promise<void> | undefined;
  private stopping = false;
  private wake: (() => void) | undefined;
  private nudged = false;
  private nudgeTimer: NodeJS.Timeout | undefined;
  /** The current run of failed rounds: since when, how many, and when it was last reported. */
  private failing: { since: number; rounds: number; reportedAt: number } | undefined;

  constructor(private readonly options: OutboxLoopOptions) {}

  /** True once `stop` was called: a round takes nothing new. */
  get stopped(): boolean {
    return this.stopping;
  }

  /** Whether rounds are failing now, and since when (a job's health, jobs/job.ts). */
  get failingSince(): Date | undefined {
    return this.failing && new Date(this.failing.since);
  }

  /** How many pieces of work run now. */
  get inFlightCount(): number {
    return this.inFlight.size;
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

  /** Runs `work` in the background, counted in flight; when it ends, the loop looks again (see the options). */
  track(work: Promise<void>): void {
    const tracked = work.finally(() => {
      const wasFull = this.free <= 0;
      this.inFlight.delete(tracked);
      if (wasFull || !this.options.lookAgainOnlyWhenFull) this.nudge();
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
        if (this.failing) {
          this.options.onResumed?.({ rounds: this.failing.rounds, forMs: Date.now() - this.failing.since });
          this.failing = undefined;
        }
      } catch (error) {
        this.failed(error);
      }
      if (busy || this.stopping) continue;
      if (!this.nudged) await this.sleep(this.options.pollIntervalMs);
      else if (this.options.delayNudgesDuringRounds && this.options.nudgeDelayMs)
        await this.sleep(this.options.nudgeDelayMs);
    }
  }

  private failed(error: unknown): void {
    const now = Date.now();
    const failing = (this.failing ??= { since: now, rounds: 0, reportedAt: 0 });
    failing.rounds++;
    if (failing.rounds > 1 && now - failing.reportedAt < REPORT_FAILING_EVERY_MS) return;
    failing.reportedAt = now;
    this.options.onRoundError(error, { rounds: failing.rounds, forMs: now - failing.since });
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
