/** What the vital signs read from the gateway's `GET /metrics` (Prometheus text format). */
export interface MetricsReading {
  /** `wirestream_process_resident_memory_bytes`, when process metrics are on. */
  readonly rssBytes: number | undefined;
  /** `wirestream_nodejs_heap_size_used_bytes`. */
  readonly heapUsedBytes: number | undefined;
  /** Cumulative buckets of `wirestream_gateway_event_to_wire_seconds`, by upper bound, ascending (last is +Inf). */
  readonly latencyBuckets: readonly HistogramBucket[];
}

export interface HistogramBucket {
  /** Upper bound in seconds (`le`); `Infinity` for `+Inf`. */
  readonly le: number;
  /** Observations at or below `le` since the process started. */
  readonly count: number;
}

const LATENCY_BUCKET = 'wirestream_gateway_event_to_wire_seconds_bucket';
const RSS = 'wirestream_process_resident_memory_bytes';
const HEAP_USED = 'wirestream_nodejs_heap_size_used_bytes';

/**
 * Reads the few series the console charts out of a Prometheus text exposition. Only what it
 * needs: names it does not know are skipped without parsing their labels.
 */
export function readMetrics(text: string): MetricsReading {
  let rssBytes: number | undefined;
  let heapUsedBytes: number | undefined;
  const latencyBuckets: HistogramBucket[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    if (line.startsWith(LATENCY_BUCKET)) {
      const le = /[{,]le="([^"]+)"/.exec(line)?.[1];
      if (le !== undefined) latencyBuckets.push({ le: le === '+Inf' ? Infinity : Number(le), count: valueOf(line) });
    } else if (line.startsWith(RSS) && isName(line, RSS)) {
      rssBytes = valueOf(line);
    } else if (line.startsWith(HEAP_USED) && isName(line, HEAP_USED)) {
      heapUsedBytes = valueOf(line);
    }
  }
  latencyBuckets.sort((a, b) => a.le - b.le);
  return { rssBytes, heapUsedBytes, latencyBuckets };
}

/** True when the line's metric name is exactly `name` (not a longer name sharing the prefix). */
function isName(line: string, name: string): boolean {
  const next = line.charAt(name.length);
  return next === '{' || next === ' ';
}

function valueOf(line: string): number {
  // `name{labels} value [timestamp]`: the value is the first field after the closing brace (or name).
  const afterLabels = line.lastIndexOf('}') + 1 || line.indexOf(' ');
  return Number(line.slice(afterLabels).trim().split(' ')[0]);
}

/** Per-bucket increase between two readings of the same histogram (a restart resets to `current`). */
export function bucketIncrease(previous: readonly HistogramBucket[], current: readonly HistogramBucket[]): HistogramBucket[] {
  const reset = current.some((bucket, i) => bucket.count < (previous[i]?.count ?? 0));
  return current.map((bucket, i) => ({ le: bucket.le, count: reset ? bucket.count : bucket.count - (previous[i]?.count ?? 0) }));
}

/**
 * The q-quantile of cumulative histogram buckets, interpolated linearly inside the bucket that
 * holds it (what Prometheus' `histogram_quantile` does). `undefined` when there are no
 * observations. A quantile in the +Inf bucket answers the largest finite bound: the histogram
 * cannot say more than "above it".
 */
export function histogramQuantile(q: number, buckets: readonly HistogramBucket[]): number | undefined {
  const total = buckets.at(-1)?.count ?? 0;
  if (total <= 0) return undefined;
  const rank = q * total;
  let lowerBound = 0;
  let lowerCount = 0;
  for (const bucket of buckets) {
    if (bucket.count >= rank) {
      if (bucket.le === Infinity) return lowerBound;
      const inBucket = bucket.count - lowerCount;
      return inBucket <= 0 ? bucket.le : lowerBound + ((bucket.le - lowerBound) * (rank - lowerCount)) / inBucket;
    }
    lowerBound = bucket.le;
    lowerCount = bucket.count;
  }
  return lowerBound;
}
