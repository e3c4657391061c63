/**
 * A fixed-size latency histogram in microseconds: exact below 128 µs, then 64 sub-buckets per
 * power of two (≤ 1.6 % relative error) up to 2^31 µs (~36 min). Recording is two integer ops and
 * an array increment; workers ship it to the parent as sparse pairs.
 */
const SUB_BUCKETS = 64;
const MAX_VALUE = 0x7fff_ffff;
/** Index of MAX_VALUE + 1. */
const HISTOGRAM_BUCKETS = bucketOf(MAX_VALUE) + 1;

export function bucketOf(valueUs: number): number {
  const v = valueUs <= 0 ? 0 : valueUs >= MAX_VALUE ? MAX_VALUE : valueUs | 0;
  if (v < 2 * SUB_BUCKETS) return v;
  const shift = 31 - Math.clz32(v) - 6; // v >>> shift lands in [64, 128)
  return shift * SUB_BUCKETS + (v >>> shift);
}

/** Smallest value that lands in `bucket`. */
export function lowerBoundOf(bucket: number): number {
  if (bucket < 2 * SUB_BUCKETS) return bucket;
  const shift = Math.floor(bucket / SUB_BUCKETS) - 1;
  const mantissa = bucket - shift * SUB_BUCKETS;
  return mantissa * 2 ** shift;
}

export function createHistogram(): Uint32Array {
  return new Uint32Array(HISTOGRAM_BUCKETS);
}

/** Non-zero buckets as `[bucket, count, bucket, count, …]`. */
export function toSparse(histogram: Uint32Array): number[] {
  const pairs: number[] = [];
  for (let i = 0; i < histogram.length; i++) {
    const count = histogram[i] as number;
    if (count !== 0) pairs.push(i, count);
  }
  return pairs;
}

export function addSparse(histogram: Uint32Array, pairs: readonly number[]): void {
  for (let i = 0; i + 1 < pairs.length; i += 2) {
    const bucket = pairs[i] as number;
    histogram[bucket] = (histogram[bucket] as number) + (pairs[i + 1] as number);
  }
}

/**
 * The value at quantile `q` (0..1) among `recorded + missing` samples, where `missing` samples
 * count as infinitely late (lost or still undelivered at the deadline): returns Infinity when the
 * quantile falls among them. Bucket midpoints, in microseconds.
 */
export function quantileUs(histogram: Uint32Array, q: number, missing = 0): number {
  let recorded = 0;
  for (let i = 0; i < histogram.length; i++) recorded += histogram[i] as number;
  const total = recorded + missing;
  if (total === 0) return Number.NaN;
  const rank = Math.max(1, Math.ceil(q * total));
  if (rank > recorded) return Number.POSITIVE_INFINITY;
  let seen = 0;
  for (let i = 0; i < histogram.length; i++) {
    seen += histogram[i] as number;
    if (seen >= rank) return (lowerBoundOf(i) + lowerBoundOf(i + 1)) / 2;
  }
  return Number.POSITIVE_INFINITY;
}
