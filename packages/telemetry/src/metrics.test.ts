import { describe, expect, it } from 'vitest';
import { Counter, createMetricsRegistry } from './index.js';

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
