import { setTimeout as sleep } from 'node:timers/promises';
import { inspect } from 'node:util';

/** Options of {@link waitFor}. */
export interface WaitForOptions {
  /** Give up after this long. @default 10_000 (10 seconds) */
  timeoutMs?: number;
  /** Pause between attempts. @default 50 */
  intervalMs?: number;
  /** What was awaited, for the timeout error: "consumer to receive 3 messages". @default 'condition' */
  message?: string;
}

/**
 * Polls `fn` until it passes or the deadline is reached: the test-side replacement for sleeps.
 *
 * `fn` passes when it returns (or resolves to) something other than `false`, `null` or
 * `undefined` without throwing. So a predicate works as is (`() => received.length === 3`), a
 * lookup returns what it found (`() => messages.find(isMine)`), and an assertion passes by
 * returning a value after it (`() => { expect(x).toBe(1); return true; }`).
 * Resolves with the passing value. On timeout, throws an Error that names `message`, the time
 * waited and the attempts made, with the last thrown error as `cause`.
 */
export async function waitFor<T>(
  fn: () => T | Promise<T>,
  options: WaitForOptions = {},
): Promise<Exclude<T, false | null | undefined>> {
  const {
    timeoutMs = 10_000, // 10 seconds
    intervalMs = 50,
    message = 'condition',
  } = options;
  if (!(timeoutMs > 0)) throw new RangeError(`waitFor: timeoutMs must be > 0, got ${timeoutMs}`);
  if (!(intervalMs >= 0)) throw new RangeError(`waitFor: intervalMs must be >= 0, got ${intervalMs}`);

  const started = Date.now();
  let attempts = 0;
  let lastError: unknown;
  let lastValue: unknown;
  for (;;) {
    attempts += 1;
    try {
      const value = await fn();
      if (value !== false && value !== null && value !== undefined) {
        return value as Exclude<T, false | null | undefined>;
      }
      lastValue = value;
      lastError = undefined;
    } catch (error) {
      lastError = error;
    }
    const elapsedMs = Date.now() - started;
    if (elapsedMs >= timeoutMs) {
      const last =
        lastError === undefined
          ? `last result: ${String(lastValue)}`
          : `last error: ${lastError instanceof Error ? lastError.message : inspect(lastError)}`;
      throw new Error(
        `waitFor: timed out after ${elapsedMs} ms (${attempts} attempts) waiting for ${message}; ${last}`,
        { cause: lastError },
      );
    }
    await sleep(Math.min(intervalMs, timeoutMs - elapsedMs));
  }
}
