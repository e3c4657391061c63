import { describe, expect, it } from 'vitest';
import { createRateLimiter } from './rate-limit.js';
import { GATEWAY_DEFAULTS } from '../../defaults.js';

describe('createRateLimiter', () => {
  it('allows a burst, then refuses until time refills the bucket', () => {
    const limiter = createRateLimiter({ ratePerSecond: 10, burst: 3 });
    const state = limiter.initialState();
    const t0 = 1_000;
    expect([limiter.take(state, t0), limiter.take(state, t0), limiter.take(state, t0)]).toEqual([true, true, true]);
    expect(limiter.take(state, t0)).toBe(false);
    expect(limiter.take(state, t0 + 99)).toBe(false); // 0.99 of a token
    expect(limiter.take(state, t0 + 100)).toBe(true); // one token per 100 ms
    expect(limiter.take(state, t0 + 100)).toBe(false);
  });

  it('holds the sustained rate over time', () => {
    const limiter = createRateLimiter({ ratePerSecond: 50, burst: 5 });
    const state = limiter.initialState();
    let accepted = 0;
    // A flood: one attempt per millisecond for 10 s.
    for (let now = 0; now < 10_000; now++) if (limiter.take(state, now)) accepted++;
    expect(accepted).toBeGreaterThanOrEqual(500);
    expect(accepted).toBeLessThanOrEqual(505); // 50/s × 10 s + the initial burst
  });

  it('never refills beyond the burst after a quiet period', () => {
    const limiter = createRateLimiter({ ratePerSecond: 10, burst: 2 });
    const state = limiter.initialState();
    limiter.take(state, 0);
    limiter.take(state, 3_600_000);
    expect(state.tokens).toBe(1);
  });

  it('refills nothing when the clock goes backwards', () => {
    const limiter = createRateLimiter({ ratePerSecond: 1, burst: 1 });
    const state = limiter.initialState();
    expect(limiter.take(state, 5_000)).toBe(true);
    expect(limiter.take(state, 1_000)).toBe(false);
    expect(state.lastMs).toBe(5_000);
    expect(limiter.take(state, 6_000)).toBe(true);
  });

  it('keeps its state as two numbers that can live on the connection', () => {
    const limiter = createRateLimiter();
    const connection = { id: 'c1', ...limiter.initialState() };
    expect(limiter.take(connection, 0)).toBe(true);
    expect(Object.keys(limiter.initialState())).toEqual(['tokens', 'lastMs']);
    expect(connection.tokens).toBe(GATEWAY_DEFAULTS.subscribeBurst - 1); // one taken from a full bucket
  });

  it('fails fast on a rate or burst that cannot work', () => {
    expect(() => createRateLimiter({ ratePerSecond: 0 })).toThrow('rate limiter ratePerSecond must be a positive number, got 0');
    expect(() => createRateLimiter({ burst: 0.5 })).toThrow(/burst must be at least 1/);
    expect(() => createRateLimiter({ ratePerSecond: Number.NaN })).toThrow(/positive number/);
  });
});
