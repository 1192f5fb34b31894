import { MAX_DELIVERY_ATTEMPTS, RETRY_DELAYS_MS, retryDelayMs } from './backoff';

describe('retryDelayMs', () => {
  it('spreads 9 attempts over about 3 days', () => {
    const total = RETRY_DELAYS_MS.reduce((sum, ms) => sum + ms, 0);
    expect(MAX_DELIVERY_ATTEMPTS).toBe(9);
    expect(total / 86_400_000).toBeGreaterThan(2.5);
    expect(total / 86_400_000).toBeLessThan(3.5);
  });

  it('grows with each failure, with ±20% jitter', () => {
    expect(retryDelayMs(1, () => 0.5)).toBe(5_000);
    expect(retryDelayMs(1, () => 0)).toBe(4_000);
    expect(retryDelayMs(1, () => 0.999999)).toBe(6_000);
    expect(retryDelayMs(2, () => 0.5)).toBe(60_000);
    expect(retryDelayMs(8, () => 0.5)).toBe(86_400_000);
  });

  it('gives up after the last attempt', () => expect(retryDelayMs(MAX_DELIVERY_ATTEMPTS, () => 0.5)).toBeNull());
});
