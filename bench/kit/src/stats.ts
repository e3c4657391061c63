/** The statistics the benches report: medians and spreads over rounds, quantiles, paired ratios, a straight-line fit. */

/** The middle value; of an even count, the mean of the middle two. NaN values are left out; NaN when none is left. */
export function median(values: readonly number[]): number {
  const sorted = values.filter((v) => !Number.isNaN(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** The q-quantile of ascending values (nearest rank), NaN when empty. */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] as number;
}

/** A median and the range it came from (over rounds). */
export interface Spread {
  readonly median: number;
  readonly min: number;
  readonly max: number;
  readonly n: number;
}

/** Median, min and max of the finite values. */
export function spreadOf(values: readonly number[]): Spread {
  const finite = values.filter((v) => Number.isFinite(v));
  if (finite.length === 0) return { median: Number.NaN, min: Number.NaN, max: Number.NaN, n: 0 };
  return { median: median(finite), min: Math.min(...finite), max: Math.max(...finite), n: finite.length };
}

/**
 * `change ÷ base` per pair (the same round or repetition), for the pairs where both are measured:
 * a change and its baseline run side by side, so a noisy machine moves both.
 */
export function pairedRatios<T>(pairs: readonly (readonly [base: T | undefined, change: T | undefined])[], of: (x: T) => number): number[] {
  return pairs.flatMap(([base, change]) => (base !== undefined && change !== undefined ? [of(change) / of(base)] : []));
}

/** Least squares `y = intercept + slope × x`; NaN for fewer than two distinct x. */
export function fitLine(points: readonly (readonly [number, number])[]): { intercept: number; slope: number } {
  const n = points.length;
  const mx = points.reduce((t, [x]) => t + x, 0) / n;
  const my = points.reduce((t, [, y]) => t + y, 0) / n;
  let sxx = 0;
  let sxy = 0;
  for (const [x, y] of points) {
    sxx += (x - mx) ** 2;
    sxy += (x - mx) * (y - my);
  }
  if (n < 2 || sxx === 0) return { intercept: Number.NaN, slope: Number.NaN };
  const slope = sxy / sxx;
  return { intercept: my - slope * mx, slope };
}

/** The items in the order of round `round` (1-based): it starts with item `round` (mod their count). */
export function rotated<T>(items: readonly T[], round: number): T[] {
  return items.map((_, i) => items[(i + round - 1) % items.length] as T);
}
