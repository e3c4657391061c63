import { describe, expect, it } from 'vitest';
import { bucketIncrease, histogramQuantile, readMetrics } from './prometheus';

const exposition = `# HELP wirestream_process_resident_memory_bytes Resident memory size in bytes.
# TYPE wirestream_process_resident_memory_bytes gauge
wirestream_process_resident_memory_bytes{service="gateway"} 81920000
wirestream_nodejs_heap_size_used_bytes{service="gateway"} 12345678
wirestream_nodejs_heap_size_used_bytes_extra{service="gateway"} 1
wirestream_gateway_event_to_wire_seconds_bucket{le="0.01",service="gateway"} 90
wirestream_gateway_event_to_wire_seconds_bucket{le="0.001",service="gateway"} 10
wirestream_gateway_event_to_wire_seconds_bucket{le="+Inf",service="gateway"} 100
wirestream_gateway_event_to_wire_seconds_bucket{le="0.1",service="gateway"} 100
wirestream_gateway_event_to_wire_seconds_sum{service="gateway"} 0.8
`;

describe('readMetrics', () => {
  it('reads memory gauges and the latency buckets in ascending order, ignoring look-alike names', () => {
    const m = readMetrics(exposition);
    expect(m.rssBytes).toBe(81_920_000);
    expect(m.heapUsedBytes).toBe(12_345_678);
    expect(m.latencyBuckets).toEqual([
      { le: 0.001, count: 10 },
      { le: 0.01, count: 90 },
      { le: 0.1, count: 100 },
      { le: Infinity, count: 100 },
    ]);
  });

  it('answers undefined for what the exposition does not have (GATEWAY_METRICS without process metrics)', () => {
    expect(readMetrics('')).toEqual({ rssBytes: undefined, heapUsedBytes: undefined, latencyBuckets: [] });
  });
});

describe('histogramQuantile', () => {
  const buckets = readMetrics(exposition).latencyBuckets;
  it('interpolates inside the bucket holding the rank', () => {
    expect(histogramQuantile(0.5, buckets)).toBeCloseTo(0.001 + (0.009 * 40) / 80);
    expect(histogramQuantile(0.99, buckets)).toBeCloseTo(0.01 + (0.09 * 9) / 10);
  });
  it('is undefined without observations and the largest finite bound for the +Inf bucket', () => {
    expect(histogramQuantile(0.99, [])).toBeUndefined();
    expect(histogramQuantile(0.99, [{ le: 0.1, count: 0 }, { le: Infinity, count: 0 }])).toBeUndefined();
    expect(histogramQuantile(0.99, [{ le: 0.1, count: 1 }, { le: Infinity, count: 100 }])).toBe(0.1);
  });
});

describe('bucketIncrease', () => {
  it('subtracts the earlier reading, or starts over after a counter reset', () => {
    const before = [{ le: 0.1, count: 5 }, { le: Infinity, count: 6 }];
    expect(bucketIncrease(before, [{ le: 0.1, count: 7 }, { le: Infinity, count: 9 }])).toEqual([{ le: 0.1, count: 2 }, { le: Infinity, count: 3 }]);
    expect(bucketIncrease(before, [{ le: 0.1, count: 1 }, { le: Infinity, count: 1 }])).toEqual([{ le: 0.1, count: 1 }, { le: Infinity, count: 1 }]);
  });
});
