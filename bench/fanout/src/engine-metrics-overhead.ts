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
import { auctionSchemaPath, loadWirestreamSchema } from '@wirestream/schema';
import { channelName, shardOf } from '@wirestream/wire';
import { createLogger, createMetricsRegistry } from '@wirestream/telemetry';
import { createGatewayMetrics, createHub, createMemoryBus, createOperationCompiler, type ConnectionWriter } from '@wirestream/gateway/internals';
import { median, parseCli } from '@wirestream/bench-kit';

const { values } = parseCli({
  options: {
    subscribers: { type: 'string', default: '10000' },
    events: { type: 'string', default: '500' },
    rounds: { type: 'string', default: '10' },
  },
});
const SUBSCRIBERS = Number(values.subscribers);
const EVENTS = Number(values.events);
const ROUNDS = Number(values.rounds);

const schema = loadWirestreamSchema(auctionSchemaPath);
const route = schema.routesForTopic('listing-events')[0];
if (!route) throw new Error('the example schema has no listing-events route');
// ~2 KB listing events like the demo producer's, 50 listings spread over the topic's shards.
const events = Array.from({ length: EVENTS }, (_, i) => {
  const key = `lst-${String(i % 50).padStart(6, '0')}`;
  const payload = JSON.stringify({
    event_id: `evt-${i}`,
    event_type: 'ListingUpdated',
    listing_id: key,
    occurred_at: '2026-01-01T00:00:00.000Z',
    listing: {
      listing_id: key,
      title: `Listing ${i % 50}`,
      description: 'x'.repeat(1_200),
      status: 'ACTIVE',
      category_path: ['home', 'garden'],
      image_urls: ['https://img.example.com/a.jpg', 'https://img.example.com/b.jpg'],
      seller_info: { seller_id: 'slr-1', display_name: 'Seller', rating: 4.8 },
      current_price: { amount_cents: 1_000 + i, currency_code: 'EUR' },
      recent_bids: [],
    },
  });
  return { key, payload, channel: channelName('ws', route.topic, shardOf(key, route.shards)), partition: i % 6 };
});
const compiler = createOperationCompiler(schema, { channelPrefix: 'ws' });
const compiled = compiler.compile(
  { query: 'subscription { listingUpdated { listing_id event_type occurred_at listing { title description current_price { amount_cents currency_code } } } }' },
  { key: 'bench', authorize: (_route, args) => ({ ok: true, args }) },
);
if (!compiled.ok || compiled.operation.kind !== 'subscription') throw new Error(`bench operation does not compile: ${JSON.stringify(compiled)}`);
const operation = compiled.operation;

let frames = 0;
let bytes = 0;
/** Builds every frame as the uWS writer would (`head + payload + '}'`), then drops it. */
const writer: ConnectionWriter<object> = {
  send: () => undefined,
  sendFrames: (_conn, head, payloads) => {
    for (const payload of payloads) {
      const frame = head + payload + '}';
      bytes += frame.length;
      frames++;
    }
  },
  close: () => undefined,
  hasRoom: () => true,
  replayChunkBytes: 65_536,
};

async function engine(withMetrics: boolean) {
  const bus = createMemoryBus();
  const hub = createHub<object>({
    schema,
    broker: bus.broker,
    logger: createLogger({ name: 'bench', level: 'error' }),
    writer,
    ...(withMetrics ? { metrics: createGatewayMetrics(createMetricsRegistry({ service: 'bench' })) } : {}),
  });
  for (let i = 0; i < SUBSCRIBERS; i++) hub.subscribe({}, String(i), operation);
  // Channels are subscribed a turn later (after the history floor): wait until the bus routes them.
  while (hub.stats().confirmedChannels < operation.channels.length) await new Promise((resolve) => setImmediate(resolve));
  return bus;
}

let offset = 0;
/** Feeds the corpus as one burst per 50 events (as ioredis hands over socket reads) and waits for every flush. */
async function round(bus: Awaited<ReturnType<typeof engine>>): Promise<number> {
  const started = process.cpuUsage();
  for (let i = 0; i < events.length; i += 50) {
    for (const event of events.slice(i, i + 50)) {
      const envelope = `{"v":1,"topic":"listing-events","partition":${event.partition},"offset":"${offset++}","key":${JSON.stringify(event.key)},"ts":${Date.now()},"payload":${event.payload}}`;
      bus.publish(event.channel, envelope);
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
  const used = process.cpuUsage(started);
  return used.user + used.system;
}

const on = await engine(true);
const off = await engine(false);
await round(on); // warm-up: JIT both paths
await round(off);
const timings = { on: [] as number[], off: [] as number[] };
for (let r = 0; r < ROUNDS; r++) {
  // Alternate the order too, so drift in machine load does not favour one side.
  const order = r % 2 === 0 ? (['on', 'off'] as const) : (['off', 'on'] as const);
  for (const side of order) timings[side].push(await round(side === 'on' ? on : off));
}
const deliveries = EVENTS * SUBSCRIBERS;
const nsPerDelivery = (us: number): string => ((us * 1_000) / deliveries).toFixed(1);
const mOn = median(timings.on);
const mOff = median(timings.off);
const paired = timings.on.map((t, i) => t / (timings.off[i] as number) - 1);
console.log(`metrics overhead in the fan-out engine: ${SUBSCRIBERS} subscribers × ${EVENTS} events per round, ${ROUNDS} rounds each, alternating`);
console.log(`| metrics | CPU per round, median (min–max) | ns per delivery |`);
console.log(`| --- | --- | --- |`);
console.log(`| on | ${(mOn / 1_000).toFixed(1)} ms (${(Math.min(...timings.on) / 1_000).toFixed(1)}–${(Math.max(...timings.on) / 1_000).toFixed(1)}) | ${nsPerDelivery(mOn)} |`);
console.log(`| off | ${(mOff / 1_000).toFixed(1)} ms (${(Math.min(...timings.off) / 1_000).toFixed(1)}–${(Math.max(...timings.off) / 1_000).toFixed(1)}) | ${nsPerDelivery(mOff)} |`);
console.log(`overhead: ${((mOn / mOff - 1) * 100).toFixed(2)} % (medians); paired rounds median ${(median(paired) * 100).toFixed(2)} %; frames built ${frames}, ${(bytes / 1e9).toFixed(2)} GB`);

// Cost accounting, immune to machine noise: exactly the metric calls the engine makes per event and
// per group flush (one group, one payload per flush: the worst case), timed alone. They do not
// depend on the number of subscribers, so their share shrinks as N grows.
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
