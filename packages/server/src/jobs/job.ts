import type { Database } from '@works-api/prisma';
import type { Config } from '../config';
import type { ProcessMail } from '../mail/start';
import type { Logger } from '../observability/logger';
import type { Telemetry } from '../observability/telemetry';

/**
 * A piece of background work a process runs beside (or instead of) serving HTTP: the mail sender, the webhook
 * dispatcher, the idempotency janitor, the search re-fold. Every one is started and stopped the same way, from the
 * one list in jobs/index.ts, so start-up and shutdown cannot forget one.
 */
export interface Job {
  /** Its name in logs and health (`mail-sender`, `webhook-dispatcher`, ...). */
  readonly name: string;
  /** Starts it; it runs until `stop`. */
  start(): void;
  /**
   * Stops taking new work and waits (up to `timeoutMs`) for the work in flight; resolves false when some had to be
   * cut off (it is taken up again after its lease, by whichever process runs).
   */
  stop(timeoutMs: number): Promise<boolean>;
  /** Whether it runs and, when its rounds keep failing (the database away), since when. */
  health(): JobHealth;
  /** Its gauges now (work in flight). */
  metrics(): JobMetrics;
  /** What the shutdown log says when `stop` had to cut work off. */
  readonly cutOffMessage?: string;
}

export interface JobHealth {
  running: boolean;
  failingSince?: Date | undefined;
}

export interface JobMetrics {
  inFlight: number;
}

/** A job that runs one task started by `run` and stopped by the function it returns (janitors, one-off passes). */
export function taskJob(name: string, run: () => { stop(): Promise<void> }): Job {
  let running: { stop(): Promise<void> } | undefined;
  return {
    name,
    start() {
      running = run();
    },
    async stop() {
      await running?.stop();
      running = undefined;
      return true;
    },
    health: () => ({ running: running !== undefined }),
    metrics: () => ({ inFlight: 0 }),
  };
}

/**
 * Runs `round` now and every `everyMs` (a timer that does not keep the process alive), one round at a time; a
 * failed round is logged with `failure` and the next one comes on time. `stop` clears the timer and waits for the
 * round in flight. The janitors are made of it.
 */
export function startRounds(
  round: () => Promise<void>,
  everyMs: number,
  logger: Logger,
  failure: string,
): { stop(): Promise<void> } {
  let running: Promise<void> = Promise.resolve();
  const run = () => {
    running = round().catch((error: unknown) => logger.warn({ err: error }, failure));
  };
  run();
  const timer = setInterval(run, everyMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}

/** What a job is made from. */
export interface JobContext {
  config: Config;
  database: Database;
  logger: Logger;
  telemetry: Telemetry;
  mail: ProcessMail;
}
