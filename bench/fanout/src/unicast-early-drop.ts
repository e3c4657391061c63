#!/usr/bin/env node
/**
 * The early drop of decision 0039 inside the fan-out engine, in one process so the machine's noise
 * hits both sides alike: the real engine (`createHub` on the in-process bus), K subscribers each
 * following its own listing (`listingUpdated(listing_id: "lst-…")`, a distinct operation each), fed
 * ~2 KB envelopes of K ÷ share listings (share 0.1: nine events in ten have no subscriber here, as
 * one of ten gateways sees a topic), in alternating rounds:
 *   - `routed`:   each envelope with the routing key its batch part gives (dropped unparsed when unwanted);
 *   - `unrouted`: the same envelopes without it (parsed, then found wanted by no group: before 0039's drop).
 * Reported: CPU per published event and per delivery. The transport is a no-op that builds each frame.
 *
 *   node bench/fanout/dist/unicast-early-drop.js [--subscribers 1000] [--share 0.1] [--events 20000] [--rounds 8]
 */
import { auctionSchemaPath, loadWirestreamSchema } from '@wirestream/schema';
import { channelName, ROUTED_ON_KAFKA_KEY, shardOf } from '@wirestream/wire';
import { createLogger } from '@wirestream/telemetry';
import { createHub, createMemoryBus, createOperationCompiler, type ConnectionWriter } from '@wirestream/gateway/internals';
import { median, parseCli } from '@wirestream/bench-kit';

const { values } = parseCli({
  options: {
    subscribers: { type: 'string', default: '1000' },
    share: { type: 'string', default: '0.1' },
    events: { type: 'string', default: '20000' },
    rounds: { type: 'string', default: '8' },
  },
});
const SUBSCRIBERS = Number(values.subscribers);
const SHARE = Number(values.share);
const EVENTS = Number(values.events);
const ROUNDS = Number(values.rounds);
if (!(SHARE > 0 && SHARE <= 1)) throw new RangeError(`--share must be above 0 and at most 1, got ${values.share}`);

const schema = loadWirestreamSchema(auctionSchemaPath);
const found = schema.routesForTopic('listing-events')[0];
if (!found) throw new Error('the example schema has no listing-events route');
const route = found;
const keyOf = (i: number): string => `lst-${String(i).padStart(6, '0')}`;
const topicKeys = Math.round(SUBSCRIBERS / SHARE);
const events = Array.from({ length: EVENTS }, (_, i) => {
  const key = keyOf(i % topicKeys);
  const payload = JSON.stringify({
    event_id: `evt-${i}`,
    event_type: 'ListingUpdated',
    listing_id: key,
    occurred_at: '2026-01-01T00:00:00.000Z',
    listing: { listing_id: key, title: `Listing ${i}`, description: 'x'.repeat(1_600), status: 'ACTIVE', current_price: { amount_cents: 1_000 + i, currency_code: 'EUR' } },
  });
  return { key, payload, channel: channelName('ws', route.topic, shardOf(key, route.shards)), partition: i % 6 };
});
const compiler = createOperationCompiler(schema, { channelPrefix: 'ws', maxCachedDocuments: SUBSCRIBERS });
const operations = Array.from({ length: SUBSCRIBERS }, (_, k) => {
  const compiled = compiler.compile(
    { query: `subscription { listingUpdated(listing_id: "${keyOf(k)}") { listing_id event_type occurred_at listing { title current_price { amount_cents } } } }` },
    { key: 'bench', authorize: (_route, args) => ({ ok: true, args }) },
  );
  if (!compiled.ok || compiled.operation.kind !== 'subscription') throw new Error(`bench operation does not compile: ${JSON.stringify(compiled)}`);
  return compiled.operation;
});

let frames = 0;
const writer: ConnectionWriter<object> = {
  send: () => undefined,
  sendFrames: (_conn, head, payloads) => {
    for (const payload of payloads) if ((head + payload + '}').length > 0) frames++;
  },
  close: () => undefined,
  hasRoom: () => true,
  replayChunkBytes: 65_536,
};

type Side = 'routed' | 'unrouted';
async function engine() {
  const bus = createMemoryBus();
  const hub = createHub<object>({ schema, broker: bus.broker, logger: createLogger({ name: 'bench', level: 'error' }), writer });
  operations.forEach((operation, i) => hub.subscribe({}, String(i), operation));
  while (hub.stats().confirmedChannels < hub.stats().channels) await new Promise((resolve) => setImmediate(resolve));
  return { bus, hub };
}

let offset = 0;
async function round(side: Side, { bus }: Awaited<ReturnType<typeof engine>>): Promise<number> {
  const started = process.cpuUsage();
  for (let i = 0; i < events.length; i += 64) {
    for (const event of events.slice(i, i + 64)) {
      const at = String(offset++);
      const envelope = `{"v":1,"topic":"listing-events","partition":${event.partition},"offset":"${at}","key":${JSON.stringify(event.key)},"ts":${Date.now()},"payload":${event.payload}}`;
      bus.publish(event.channel, envelope, undefined, side === 'routed' ? { partition: event.partition, offset: at, on: route.keyField ?? ROUTED_ON_KAFKA_KEY, key: event.key } : undefined);
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
  const used = process.cpuUsage(started);
  return used.user + used.system;
}

const sides: Side[] = ['unrouted', 'routed'];
const engines = new Map<Side, Awaited<ReturnType<typeof engine>>>();
for (const side of sides) engines.set(side, await engine());
const at = (side: Side) => engines.get(side) as Awaited<ReturnType<typeof engine>>;
for (const side of sides) await round(side, at(side)); // warm-up
const timings = new Map<Side, number[]>(sides.map((s) => [s, []]));
for (let r = 0; r < ROUNDS; r++) {
  for (const side of r % 2 === 0 ? sides : [...sides].reverse()) timings.get(side)?.push(await round(side, at(side)));
}
const deliveries = events.filter((e) => Number(e.key.slice(4)) < SUBSCRIBERS).length;
const base = median(timings.get('unrouted') ?? []);
console.log(`early drop in the fan-out engine: ${SUBSCRIBERS} subscribers on their own keys, ${EVENTS} events per round over ${topicKeys} keys (${deliveries} deliveries), ${ROUNDS} rounds each, alternating`);
console.log('| side | CPU per round, median (min–max) | µs per published event | µs per delivery | vs unrouted | dropped unparsed per round |');
console.log('| --- | --- | --- | --- | --- | --- |');
for (const side of sides) {
  const t = timings.get(side) ?? [];
  const m = median(t);
  const unwanted = at(side).hub.stats().unwanted / (ROUNDS + 1);
  console.log(
    `| ${side} | ${(m / 1_000).toFixed(1)} ms (${(Math.min(...t) / 1_000).toFixed(1)}–${(Math.max(...t) / 1_000).toFixed(1)}) | ${(m / EVENTS).toFixed(2)} | ${(m / deliveries).toFixed(2)} | ${((m / base - 1) * 100).toFixed(1)} % | ${unwanted.toFixed(0)} |`,
  );
}
console.log(`frames built ${frames}`);
