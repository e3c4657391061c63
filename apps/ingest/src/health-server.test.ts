import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createMetricsRegistry } from '@wirestream/telemetry';
import { createHealthServer } from './health-server.js';
import { createIngestMetrics } from './metrics.js';

describe('health server', () => {
  let close: () => void = () => {};
  afterEach(() => close());

  it('answers /healthz, /readyz by readiness, /metrics with bound series', async () => {
    const registry = createMetricsRegistry({ service: 'ingest', processMetrics: false });
    const metrics = createIngestMetrics(registry, ['listing-events']);
    metrics.forTopic('listing-events').published.inc(5);
    metrics.setLag('listing-events', 2, 7);
    let ready = false;
    const server = createHealthServer({ registry, isReady: () => ready, notReadyReason: () => 'not in the consumer group yet' });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    close = () => server.close();
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    const notReady = await fetch(`${base}/readyz`);
    expect([notReady.status, await notReady.text()]).toEqual([503, 'not in the consumer group yet']);
    ready = true;
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
    const text = await (await fetch(`${base}/metrics`)).text();
    expect(text).toContain('wirestream_ingest_published_total{topic="listing-events",service="ingest"} 5');
    expect(text).toContain('wirestream_ingest_consumer_lag{topic="listing-events",partition="2",service="ingest"} 7');
    expect((await fetch(`${base}/nope`)).status).toBe(404);
  });
});
