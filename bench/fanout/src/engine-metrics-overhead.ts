#!/usr/bin/env node
/**
 * Metrics cost inside the fan-out engine (issue 7: < 3 % of fan-out throughput), measured in one
 * process so the machine's noise hits both sides alike: the real engine (`createHub` on the in-process bus) with the
 * real Prometheus series vs without, fed the same envelopes, alternating on/off rounds. The
 * transport is a no-op that still builds each frame (`head + payload + '}'`), so the engine's own
 * time is the denominator: with uWS writing real sockets the share of metrics is smaller still.
 *
 *   node bench/fanout/dist/engine-metrics-overhead.js [--subscribers 10000] [--events 500] [--rounds 10]
 */
import { createMetricsRegistry } from '@wirestream/telemetry';
import { createGatewayMetrics } from '@wirestream/gateway/internals';
import { markdownTable, median, parseCli, positiveInts } from '@wirestream/bench-kit';
import { benchListing, compileSubscription, createCompiler, createFrameSink, feedSides, listingEvents, listingKey, listingUpdated, msRange, runEngineBench } from './engine-fixture.js';

const { values } = parseCli({
  options: {
    subscribers: { type: 'string', default: '10000' },
    events: { type: 'string', default: '500' },
    rounds: { type: 'string', default: '10' },
  },
});
const { subscribers: SUBSCRIBERS, events: EVENTS, rounds: ROUNDS } = positiveInts(values, ['subscribers', 'events', 'rounds']);

// ~2 KB listing events like the demo producer's, 50 listings spread over the topic's shards.
const events = listingEvents(EVENTS, (i) => {
  const key = listingKey(i % 50);
  const listing = benchListing(i, key, 1_200, {
    category_path: ['home', 'garden'],
    image_urls: ['https://img.example.com/a.jpg', 'https://img.example.com/b.jpg'],
    seller_info: { seller_id: 'slr-1', display_name: 'Seller', rating: 4.8 },
  });
  return { key, payload: listingUpdated(i, key, { ...listing, recent_bids: [] }) };
});
const operation = compileSubscription(
  createCompiler(),
  'subscription { listingUpdated { listing_id event_type occurred_at listing { title description current_price { amount_cents currency_code } } } }',
);
const sink = createFrameSink<object>({ countBytes: true });

runEngineBench(async () => {
  const sides = ['on', 'off'] as const;
  const { samples } = await feedSides(sides, ROUNDS, events, (side) => ({
    writer: sink.writer,
    metrics: side === 'on',
    subscribe: (hub) => {
      for (let i = 0; i < SUBSCRIBERS; i++) hub.subscribe({}, String(i), operation);
    },
  }));
  const on = samples.get('on') ?? [];
  const off = samples.get('off') ?? [];
  const deliveries = EVENTS * SUBSCRIBERS;
  const nsPerDelivery = (us: number): string => ((us * 1_000) / deliveries).toFixed(1);
  const mOn = median(on);
  const mOff = median(off);
  const paired = on.map((t, i) => t / (off[i] as number) - 1);
  console.log(`metrics overhead in the fan-out engine: ${SUBSCRIBERS} subscribers × ${EVENTS} events per round, ${ROUNDS} rounds each, alternating`);
  console.log(markdownTable([['metrics', 'CPU per round, median (min–max)', 'ns per delivery'], ['on', msRange(on), nsPerDelivery(mOn)], ['off', msRange(off), nsPerDelivery(mOff)]]));
  console.log(`overhead: ${((mOn / mOff - 1) * 100).toFixed(2)} % (medians); paired rounds median ${(median(paired) * 100).toFixed(2)} %; frames built ${sink.frames()}, ${(sink.bytes() / 1e9).toFixed(2)} GB`);
  accounting(mOff);
});

/**
 * Cost accounting, immune to machine noise: exactly the metric calls the engine makes per event and
 * per group flush (one group, one payload per flush: the worst case), timed alone. They do not
 * depend on the number of subscribers, so their share shrinks as N grows.
 */
function accounting(mOff: number): void {
  const series = createGatewayMetrics(createMetricsRegistry({ service: 'accounting' }));
  const sample = events[0]?.payload ?? '';
  const calls = 1_000_000;
  let sink = 0;
  const started = process.hrtime.bigint();
  for (let i = 0; i < calls; i++) {
    series.eventsIn.inc();
    const bytesOut = 60 * SUBSCRIBERS + (Buffer.byteLength(sample) + 1) * SUBSCRIBERS;
    series.eventToWireSeconds.observe((i % 50) / 1_000);
    series.framesOut.inc(SUBSCRIBERS);
    series.bytesOut.inc(bytesOut);
    sink += bytesOut;
  }
  const metricNsPerEvent = Number(process.hrtime.bigint() - started) / calls;
  const engineNsPerEvent = (mOff * 1_000) / EVENTS;
  console.log(
    `accounting: metrics cost ${metricNsPerEvent.toFixed(0)} ns per event and group (${sample.length} B payload), ` +
      `the engine without metrics ${(engineNsPerEvent / 1_000).toFixed(1)} µs per event at ${SUBSCRIBERS} subscribers: ` +
      `${((metricNsPerEvent / engineNsPerEvent) * 100).toFixed(2)} %${sink > 0 ? '' : ' (nothing measured)'}`,
  );
}
