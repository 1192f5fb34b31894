/**
 * When a failed delivery is tried again: waits after the 1st, 2nd, … failed attempt, about 3 days in all
 * (5 s + 1 min + 10 min + 1 h + 6 h + 12 h + 24 h + 24 h ≈ 2.8 days, 9 attempts). After the last, the delivery
 * is `failed`. Each wait gets ±20% jitter, so a receiver that comes back is not hit by every retry at once.
 */
export const RETRY_DELAYS_MS = [
  5_000, 60_000, 600_000, 3_600_000, 21_600_000, 43_200_000, 86_400_000, 86_400_000,
] as const;

/** Attempts at one delivery before it gives up: the first, then one per retry delay. */
export const MAX_DELIVERY_ATTEMPTS = RETRY_DELAYS_MS.length + 1;

/** An endpoint whose attempts have all failed for this long is disabled (`disabledReason: failing`). */
export const DISABLE_AFTER_FAILING_MS = 5 * 24 * 60 * 60 * 1000;

const JITTER = 0.2;

/** The wait after `attempts` failed attempts, or null when that was the last one. `random` is in [0, 1). */
export function retryDelayMs(attempts: number, random: () => number = Math.random): number | null {
  const base = RETRY_DELAYS_MS[attempts - 1];
  if (base === undefined) return null;
  return Math.round(base * (1 - JITTER + 2 * JITTER * random()));
}
