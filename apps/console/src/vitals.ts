import { bucketIncrease, histogramQuantile, type MetricsReading } from './prometheus';

/** The fields of the gateway's `GET /stats` the console reads. */
export interface GatewayStatsReading {
  readonly connections: number;
  readonly subscriptions: number;
  /** Distinct operations (dedup groups). */
  readonly groups: number;
  readonly eventsIn: number;
  readonly framesOut: number;
  readonly ready: boolean;
  readonly draining: boolean;
}

/** One poll of the gateway: `/stats`, and `/metrics` when the gateway serves it. */
export interface VitalsReading {
  readonly atMs: number;
  readonly stats: GatewayStatsReading;
  readonly metrics: MetricsReading | undefined;
}

/** One point of every vital-sign chart. `undefined` draws a gap (no data, or not measurable yet). */
export interface VitalsSample {
  readonly atMs: number;
  readonly connections: number;
  readonly subscriptions: number;
  readonly operations: number;
  readonly eventsInPerSecond: number | undefined;
  readonly framesOutPerSecond: number | undefined;
  /** p99 event-to-wire latency over the last `latencyWindowMs`, in milliseconds; undefined without events. */
  readonly p99LatencyMs: number | undefined;
  readonly rssBytes: number | undefined;
  readonly heapUsedBytes: number | undefined;
  readonly ready: boolean;
}

export interface VitalsHistoryOptions {
  /** Samples kept (one per poll). @default 300 (5 minutes at one poll per second) */
  readonly capacity?: number;
  /** The p99 is computed over events of this trailing window, not since start. @default 10_000 (10 seconds) */
  readonly latencyWindowMs?: number;
}

export interface VitalsHistory {
  /** Turns a reading into a sample (rates against the previous reading) and keeps it. */
  push(reading: VitalsReading): VitalsSample;
  /** Oldest first, at most `capacity`. */
  samples(): readonly VitalsSample[];
}

/** Keeps the last minutes of vital signs; counters become per-second rates, the histogram a windowed p99. */
export function createVitalsHistory(options: VitalsHistoryOptions = {}): VitalsHistory {
  const {
    capacity = 300, // 5 minutes at 1 poll/s
    latencyWindowMs = 10_000, // 10 seconds
  } = options;
  if (!(capacity >= 2)) throw new RangeError(`capacity must be at least 2 samples, got ${capacity}`);
  const kept: VitalsSample[] = [];
  /** Readings of the latency window, oldest first: the p99 compares against the oldest. */
  const window: VitalsReading[] = [];
  let previous: VitalsReading | undefined;

  function ratePerSecond(current: number, before: number | undefined, seconds: number): number | undefined {
    if (before === undefined || seconds <= 0) return undefined;
    // A restarted gateway starts its counters at zero again: count from there.
    return (current < before ? current : current - before) / seconds;
  }

  return {
    push(reading) {
      const seconds = previous ? (reading.atMs - previous.atMs) / 1_000 : 0;
      while (window.length > 0 && reading.atMs - (window[0] as VitalsReading).atMs > latencyWindowMs) window.shift();
      const oldest = window[0]?.metrics?.latencyBuckets;
      const latest = reading.metrics?.latencyBuckets;
      const p99Seconds = latest && latest.length > 0 ? histogramQuantile(0.99, oldest ? bucketIncrease(oldest, latest) : latest) : undefined;
      const { stats } = reading;
      const sample: VitalsSample = {
        atMs: reading.atMs,
        connections: stats.connections,
        subscriptions: stats.subscriptions,
        operations: stats.groups,
        eventsInPerSecond: ratePerSecond(stats.eventsIn, previous?.stats.eventsIn, seconds),
        framesOutPerSecond: ratePerSecond(stats.framesOut, previous?.stats.framesOut, seconds),
        p99LatencyMs: p99Seconds === undefined ? undefined : p99Seconds * 1_000,
        rssBytes: reading.metrics?.rssBytes,
        heapUsedBytes: reading.metrics?.heapUsedBytes,
        ready: stats.ready && !stats.draining,
      };
      window.push(reading);
      previous = reading;
      kept.push(sample);
      if (kept.length > capacity) kept.shift();
      return sample;
    },
    samples: () => kept,
  };
}

/** Events per whole second over a trailing window, for the live view's rate. */
export interface RateMeter {
  record(atMs: number): void;
  /** Counts of the last `windowSeconds` completed seconds, oldest first (the current second is still filling). */
  series(nowMs: number): number[];
}

export function createRateMeter(windowSeconds = 60): RateMeter {
  const counts = new Map<number, number>();
  return {
    record(atMs) {
      const second = Math.floor(atMs / 1_000);
      counts.set(second, (counts.get(second) ?? 0) + 1);
    },
    series(nowMs) {
      const current = Math.floor(nowMs / 1_000);
      for (const second of counts.keys()) if (second < current - windowSeconds) counts.delete(second);
      const out: number[] = [];
      for (let s = current - windowSeconds; s < current; s++) out.push(counts.get(s) ?? 0);
      return out;
    },
  };
}
