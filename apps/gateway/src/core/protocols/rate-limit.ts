import { GATEWAY_DEFAULTS } from '../../defaults.js';

/**
 * The state of one token bucket: two numbers, meant to live on the connection object itself
 * (per-connection state is the memory floor: no wrapper, no timer, no closure per socket).
 */
export interface TokenBucketState {
  /** Tokens left; fractional between refills. */
  tokens: number;
  /** Time of the last refill, in the caller's clock (ms). */
  lastMs: number;
}

export interface RateLimiterOptions {
  /**
   * Sustained rate: tokens added per second (e.g. `subscribe` messages per second per socket).
   * @default GATEWAY_DEFAULTS.subscribeRatePerSecond (10)
   */
  readonly ratePerSecond?: number;
  /**
   * Bucket size: how many may arrive at once after a quiet period. A dashboard opening its
   * subscriptions on connect sends a burst, then little.
   * @default GATEWAY_DEFAULTS.subscribeBurst (50)
   */
  readonly burst?: number;
}

export interface RateLimiter {
  /** A full bucket. Copy its two fields onto the connection, or use it as is. */
  initialState(): TokenBucketState;
  /**
   * Refills for the time elapsed since the last call, then takes one token. Returns false when
   * the bucket is empty (refuse the message; do not queue it). Mutates `state`; allocates nothing.
   * `nowMs` should be monotonic (`performance.now()`); a clock that goes back refills nothing.
   */
  take(state: TokenBucketState, nowMs: number): boolean;
}

/**
 * A token bucket per connection, computed lazily at each `take` (no timers, so idle sockets
 * cost nothing). Fails fast on a rate or burst that is not a positive finite number.
 */
export function createRateLimiter(options: RateLimiterOptions = {}): RateLimiter {
  const {
    ratePerSecond = GATEWAY_DEFAULTS.subscribeRatePerSecond, // tokens per second
    burst = GATEWAY_DEFAULTS.subscribeBurst, // tokens
  } = options;
  if (!Number.isFinite(ratePerSecond) || ratePerSecond <= 0) {
    throw new RangeError(`rate limiter ratePerSecond must be a positive number, got ${String(ratePerSecond)}`);
  }
  if (!Number.isFinite(burst) || burst < 1) {
    throw new RangeError(`rate limiter burst must be at least 1 (one message must fit), got ${String(burst)}`);
  }
  const tokensPerMs = ratePerSecond / 1000;

  return {
    initialState: () => ({ tokens: burst, lastMs: -Infinity }),

    take(state, nowMs) {
      const elapsedMs = nowMs - state.lastMs;
      if (elapsedMs > 0) {
        // A fresh state has lastMs = -Infinity: elapsed is Infinity and the bucket starts full.
        const refilled = state.tokens + elapsedMs * tokensPerMs;
        state.tokens = refilled < burst ? refilled : burst;
        state.lastMs = nowMs;
      }
      if (state.tokens < 1) return false;
      state.tokens -= 1;
      return true;
    },
  };
}
