/**
 * Metrics cost inside the fan-out engine (issue 7: < 3 % of fan-out throughput), measured in one
 * process so the machine's noise hits both sides alike: the real engine (`createHub` on the in-process bus) with the
 * real Prometheus series vs without, fed the same envelopes, alternating on/off rounds. The
 * transport is a no-op that still builds each frame (`head + payload + '}'`), so the engine's own
 * time is the denominator: with uWS writing real sockets the share of metrics is smaller still.
 */
import { createMetricsRegistry } from '@wirestream/telemetry';
import { createGatewayMetrics } from '@wirestream/gateway/internals';
import { median } from '@wirestream/bench-kit';
import { benchEvents, compileSubscription, cpuTable, createCompiler, createFrameSink, engineCounts, engineOptions, feedSides, LISTING_QUERY, type EngineEvent } from './engine-fixture.js';
import type { MicroBench } from './scenario.js';

export const engineMetricsOverhead: MicroBench = {
  description: 'the hub on the in-process bus with the real Prometheus series vs without, alternating rounds (issue 7)',
  options: engineOptions(10_000, 500, 10),
  async run(o) {
    const { subscribers, count, rounds } = engineCounts(o);
    // ~2 KB listing events like the demo producer's, 50 listings spread over the topic's shards.
    const events = benchEvents(count, 50, 1_200, {
      category_path: ['home', 'garden'],
      image_urls: ['https://img.example.com/a.jpg', 'https://img.example.com/b.jpg'],
      seller_info: { seller_id: 'slr-1', display_name: 'Seller', rating: 4.8 },
      recent_bids: [],
    });
    const operation = compileSubscription(createCompiler(), LISTING_QUERY);
    const sink = createFrameSink<object>({ countBytes: true });
    const { samples } = await feedSides(['on', 'off'] as const, rounds, events, (side) => ({
      writer: sink.writer,
      metrics: side === 'on',
      subscribe: (hub) => {
        for (let i = 0; i < subscribers; i++) hub.subscribe({}, String(i), operation);
      },
    }));
    const on = samples.get('on') ?? [];
    const off = samples.get('off') ?? [];
    const paired = on.map((t, i) => t / (off[i] as number) - 1);
    const [mOn, mOff] = [median(on), median(off)];
    return [
      `metrics overhead in the fan-out engine: ${subscribers} subscribers × ${count} events per round, ${rounds} rounds each, alternating`,
      cpuTable('metrics', samples, { 'ns per delivery': (us) => ((us * 1_000) / (count * subscribers)).toFixed(1) }),
      `overhead: ${((mOn / mOff - 1) * 100).toFixed(2)} % (medians); paired rounds median ${(median(paired) * 100).toFixed(2)} %; frames built ${sink.frames()}, ${(sink.bytes() / 1e9).toFixed(2)} GB`,
      accounting(events, subscribers, mOff),
    ].join('\n');
  },
};

/**
 * Cost accounting, immune to machine noise: exactly the metric calls the engine makes per event and
 * per group flush (one group, one payload per flush: the worst case), timed alone. They do not
 * depend on the number of subscribers, so their share shrinks as N grows.
 */
function accounting(events: readonly EngineEvent[], subscribers: number, mOff: number): string {
  const series = createGatewayMetrics(createMetricsRegistry({ service: 'accounting' }));
  const sample = events[0]?.payload ?? '';
  const calls = 1_000_000;
  let sink = 0;
  const started = process.hrtime.bigint();
  for (let i = 0; i < calls; i++) {
    series.eventsIn.inc();
    const bytesOut = 60 * subscribers + (Buffer.byteLength(sample) + 1) * subscribers;
    series.eventToWireSeconds.observe((i % 50) / 1_000);
    series.framesOut.inc(subscribers);
    series.bytesOut.inc(bytesOut);
    sink += bytesOut;
  }
  const metricNsPerEvent = Number(process.hrtime.bigint() - started) / calls;
  const engineNsPerEvent = (mOff * 1_000) / events.length;
  return (
    `accounting: metrics cost ${metricNsPerEvent.toFixed(0)} ns per event and group (${sample.length} B payload), ` +
    `the engine without metrics ${(engineNsPerEvent / 1_000).toFixed(1)} µs per event at ${subscribers} subscribers: ` +
    `${((metricNsPerEvent / engineNsPerEvent) * 100).toFixed(2)} %${sink > 0 ? '' : ' (nothing measured)'}`
  );
}
