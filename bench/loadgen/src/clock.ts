import { performance } from 'node:perf_hooks';

/**
 * A microsecond wall clock shared by processes on one machine: CLOCK_MONOTONIC (what
 * `process.hrtime` reads, the same in every process) plus one offset to the epoch chosen by the
 * parent and handed to every child. `Date.now()` only has milliseconds, and each process's
 * `performance.timeOrigin` is its own; this gives producer and clients one µs timeline.
 */
export interface BenchClock {
  /** Add to CLOCK_MONOTONIC µs to get the shared wall-clock µs. */
  readonly offsetUs: number;
  /** Shared wall-clock µs since the epoch. */
  nowUs(): number;
}

function monotonicUs(): number {
  return Number(process.hrtime.bigint() / 1_000n);
}

/** The parent's clock: picks the offset. */
export function createBenchClock(): BenchClock {
  return clockWithOffset(Date.now() * 1_000 - monotonicUs());
}

/**
 * A child's view of the parent's clock. Reads `performance.now()` (no allocation) shifted onto the
 * shared monotonic timeline once at creation.
 */
export function clockWithOffset(offsetUs: number): BenchClock {
  const perfToMonotonicUs = monotonicUs() - performance.now() * 1_000;
  const perfToWallUs = perfToMonotonicUs + offsetUs;
  return {
    offsetUs,
    nowUs: () => performance.now() * 1_000 + perfToWallUs,
  };
}
