/** The few statistics the report needs: medians and spreads over rounds, one straight-line fit. */

/** A median and the range it came from (over rounds). */
export interface Spread {
  readonly median: number;
  readonly min: number;
  readonly max: number;
  readonly n: number;
}

export function spreadOf(values: readonly number[]): Spread {
  const finite = values.filter((v) => Number.isFinite(v));
  if (finite.length === 0) return { median: Number.NaN, min: Number.NaN, max: Number.NaN, n: 0 };
  const sorted = [...finite].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  const median = sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
  return { median, min: sorted[0] as number, max: sorted[sorted.length - 1] as number, n: sorted.length };
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
