import { describe, expect, it } from 'vitest';
import { createRateMeter, createVitalsHistory, type GatewayStatsReading, type VitalsReading } from './vitals';

const stats = (eventsIn: number, framesOut: number): GatewayStatsReading => ({
  connections: 2,
  subscriptions: 3,
  groups: 1,
  eventsIn,
  framesOut,
  ready: true,
  draining: false,
});
const metrics = (fast: number, total: number) => ({
  rssBytes: 100,
  heapUsedBytes: 50,
  latencyBuckets: [
    { le: 0.01, count: fast },
    { le: 0.1, count: total },
    { le: Infinity, count: total },
  ],
});

describe('createVitalsHistory', () => {
  it('turns counters into per-second rates and the histogram into a windowed p99', () => {
    const history = createVitalsHistory({ capacity: 3, latencyWindowMs: 2_000 });
    const readings: VitalsReading[] = [
      { atMs: 0, stats: stats(0, 0), metrics: metrics(0, 0) },
      // 10 events in 1 s, all faster than 10 ms.
      { atMs: 1_000, stats: stats(10, 30), metrics: metrics(10, 10) },
      { atMs: 2_000, stats: stats(30, 90), metrics: metrics(30, 30) },
      // 10 slow events: inside the 2 s window, 30 fast ones went out of it.
      { atMs: 4_000, stats: stats(40, 120), metrics: metrics(30, 40) },
    ];
    const samples = readings.map((r) => history.push(r));
    expect(samples[0]?.eventsInPerSecond).toBeUndefined();
    expect(samples[1]).toMatchObject({ eventsInPerSecond: 10, framesOutPerSecond: 30, connections: 2, subscriptions: 3, operations: 1, rssBytes: 100 });
    expect(samples[1]?.p99LatencyMs).toBeLessThanOrEqual(10);
    expect(samples[3]?.eventsInPerSecond).toBe(5);
    // Window of the last sample holds the 2_000 reading: 10 new events, all slow.
    expect(samples[3]?.p99LatencyMs).toBeGreaterThan(10);
    expect(history.samples()).toHaveLength(3);
    expect(history.samples()[0]?.atMs).toBe(1_000);
  });

  it('has no latency without metrics, and counts from zero after a gateway restart', () => {
    const history = createVitalsHistory();
    history.push({ atMs: 0, stats: stats(500, 500), metrics: undefined });
    const after = history.push({ atMs: 1_000, stats: stats(4, 4), metrics: undefined });
    expect(after).toMatchObject({ eventsInPerSecond: 4, p99LatencyMs: undefined, rssBytes: undefined });
  });

  it('refuses a capacity that cannot draw a line', () => {
    expect(() => createVitalsHistory({ capacity: 1 })).toThrow(/at least 2/);
  });
});

describe('createRateMeter', () => {
  it('counts events per completed second over the window', () => {
    const meter = createRateMeter(3);
    for (const at of [1_000, 1_500, 2_100, 3_999, 4_000]) meter.record(at);
    expect(meter.series(4_500)).toEqual([2, 1, 1]);
    expect(meter.series(10_000)).toEqual([0, 0, 0]);
  });
});
