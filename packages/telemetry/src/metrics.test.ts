import { describe, expect, it } from 'vitest';
import { Counter, createMetricsRegistry, FastCounter, FastHistogram, Histogram } from './index.js';

describe('createMetricsRegistry', () => {
  it('labels every series with the service and exports process metrics', async () => {
    const registry = createMetricsRegistry({ service: 'gateway' });
    const events = new Counter({ name: 'wirestream_test_events_total', help: 'events', labelNames: ['topic'], registers: [registry] });
    const child = events.labels('bid-events'); // bound once, as on a hot path
    child.inc(3);
    const text = await registry.metrics();
    expect(text).toContain('wirestream_test_events_total{topic="bid-events",service="gateway"} 3');
    expect(text).toContain('wirestream_process_resident_memory_bytes');
  });

  it('can leave process metrics out', async () => {
    const text = await createMetricsRegistry({ service: 'x', processMetrics: false }).metrics();
    expect(text).not.toContain('process_resident_memory_bytes');
  });
});

describe('FastHistogram', () => {
  it('scrapes exactly like prom-client\'s Histogram for the same observations', async () => {
    const buckets = [0.001, 0.01, 0.1, 1];
    const ours = createMetricsRegistry({ service: 'gateway', processMetrics: false });
    const theirs = createMetricsRegistry({ service: 'gateway', processMetrics: false });
    const fast = new FastHistogram({ name: 'wirestream_test_seconds', help: 'latency', buckets, registers: [ours] });
    const reference = new Histogram({ name: 'wirestream_test_seconds', help: 'latency', buckets, registers: [theirs] });
    for (const v of [0, 0.001, 0.0015, 0.05, 0.2, 0.7, 3, 12]) {
      fast.observe(v);
      reference.observe(v);
    }
    expect(await ours.metrics()).toBe(await theirs.metrics());
    expect(await ours.metrics()).toContain('wirestream_test_seconds_bucket{le="+Inf",service="gateway"} 8');
    fast.reset();
    expect(await ours.metrics()).toContain('wirestream_test_seconds_count{service="gateway"} 0');
  });

  it('refuses buckets that do not ascend', () => {
    expect(() => new FastHistogram({ name: 'x', help: 'x', buckets: [1, 1], registers: [] })).toThrow(/ascend/);
  });
});

describe('FastCounter', () => {
  it("scrapes exactly like prom-client's Counter for the same increments", async () => {
    const ours = createMetricsRegistry({ service: 'gateway', processMetrics: false });
    const theirs = createMetricsRegistry({ service: 'gateway', processMetrics: false });
    const fast = new FastCounter({ name: 'wirestream_test_frames_total', help: 'frames', registers: [ours] });
    const reference = new Counter({ name: 'wirestream_test_frames_total', help: 'frames', registers: [theirs] });
    expect(await ours.metrics()).toBe(await theirs.metrics());
    for (const n of [undefined, 3, 0, 2.5]) {
      fast.inc(n);
      reference.inc(n);
    }
    expect(await ours.metrics()).toBe(await theirs.metrics());
    expect(await ours.metrics()).toContain('wirestream_test_frames_total{service="gateway"} 6.5');
    fast.reset();
    expect(await ours.metrics()).toContain('wirestream_test_frames_total{service="gateway"} 0');
  });

  it('refuses to go down or by a non-finite amount', () => {
    const fast = new FastCounter({ name: 'x_total', help: 'x', registers: [] });
    expect(() => fast.inc(-1)).toThrow(/only grows/);
    expect(() => fast.inc(Number.NaN)).toThrow(/only grows/);
    expect(() => fast.inc(Infinity)).toThrow(/only grows/);
  });
});
