#!/usr/bin/env node
/**
 * Conflation's cost inside the fan-out engine (issue #36: with 10 % of sockets conflating, CPU per
 * delivery within 5 % of today's for the others), in one process so the machine's noise hits every
 * side alike: the real engine (`createHub` on the in-process bus) fed the same ~2 KB envelopes, in
 * alternating rounds, with
 *   - `none`:     no subscriber conflating (today's path plus one property read per write);
 *   - `keeping`:  10 % conflating whose connections have room (they take the shared write);
 *   - `lagging`:  10 % conflating whose connections have no room (their frames go to their queues).
 * The transport is a no-op that still builds each frame (`head + payload + '}'`). Reported: CPU per
 * round and ns per delivery to the 90 % that do not conflate (every side delivers the same to them;
 * what the 10 % cost is in the total).
 *
 *   node bench/fanout/dist/conflation-overhead.js [--subscribers 5000] [--events 500] [--rounds 8]
 */
import { auctionSchemaPath, loadWirestreamSchema } from '@wirestream/schema';
import { channelName, shardOf } from '@wirestream/wire';
import { createLogger } from '@wirestream/telemetry';
import { createHub, createMemoryBus, createOperationCompiler, type ConnectionWriter } from '@wirestream/gateway/internals';
import { median, parseCli } from '@wirestream/bench-kit';

const { values } = parseCli({
  options: {
    subscribers: { type: 'string', default: '5000' },
    events: { type: 'string', default: '500' },
    rounds: { type: 'string', default: '8' },
  },
});
const SUBSCRIBERS = Number(values.subscribers);
const EVENTS = Number(values.events);
const ROUNDS = Number(values.rounds);
const SHARE = 0.1;

const schema = loadWirestreamSchema(auctionSchemaPath);
const route = schema.routesForTopic('listing-events')[0];
if (!route) throw new Error('the example schema has no listing-events route');
const events = Array.from({ length: EVENTS }, (_, i) => {
  const key = `lst-${String(i % 50).padStart(6, '0')}`;
  const payload = JSON.stringify({
    event_id: `evt-${i}`,
    event_type: 'ListingUpdated',
    listing_id: key,
    occurred_at: '2026-01-01T00:00:00.000Z',
    listing: { listing_id: key, title: `Listing ${i % 50}`, description: 'x'.repeat(1_200), status: 'ACTIVE', current_price: { amount_cents: 1_000 + i, currency_code: 'EUR' } },
  });
  return { key, payload, channel: channelName('ws', route.topic, shardOf(key, route.shards)), partition: i % 6 };
});
const compiled = createOperationCompiler(schema, { channelPrefix: 'ws' }).compile(
  { query: 'subscription { listingUpdated { listing_id event_type occurred_at listing { title description current_price { amount_cents currency_code } } } }' },
  { key: 'bench', authorize: (_route, args) => ({ ok: true, args }) },
);
if (!compiled.ok || compiled.operation.kind !== 'subscription') throw new Error(`bench operation does not compile: ${JSON.stringify(compiled)}`);
const operation = compiled.operation;

interface Conn {
  readonly room: boolean;
}
let frames = 0;
const writer: ConnectionWriter<Conn> = {
  send: () => undefined,
  sendFrames: (_conn, head, payloads) => {
    for (const payload of payloads) if ((head + payload + '}').length > 0) frames++;
  },
  close: () => undefined,
  hasRoom: (conn) => conn.room,
  replayChunkBytes: 65_536,
};

type Side = 'none' | 'keeping' | 'lagging';
async function engine(side: Side) {
  const bus = createMemoryBus();
  const hub = createHub<Conn>({ schema, broker: bus.broker, logger: createLogger({ name: 'bench', level: 'error' }), writer });
  for (let i = 0; i < SUBSCRIBERS; i++) {
    const conflating = side !== 'none' && i % Math.round(1 / SHARE) === 0;
    hub.subscribe({ room: !(conflating && side === 'lagging') }, String(i), operation, { conflate: conflating });
  }
  while (hub.stats().confirmedChannels < operation.channels.length) await new Promise((resolve) => setImmediate(resolve));
  return bus;
}

let offset = 0;
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

const sides: Side[] = ['none', 'keeping', 'lagging'];
const buses = new Map<Side, Awaited<ReturnType<typeof engine>>>();
for (const side of sides) buses.set(side, await engine(side));
for (const side of sides) await round(buses.get(side) as Awaited<ReturnType<typeof engine>>); // warm-up
const timings = new Map<Side, number[]>(sides.map((s) => [s, []]));
for (let r = 0; r < ROUNDS; r++) {
  const order = r % 2 === 0 ? sides : [...sides].reverse();
  for (const side of order) timings.get(side)?.push(await round(buses.get(side) as Awaited<ReturnType<typeof engine>>));
}
const plain = Math.round(SUBSCRIBERS * (1 - SHARE));
const base = median(timings.get('none') ?? []);
console.log(`conflation in the fan-out engine: ${SUBSCRIBERS} subscribers (${SHARE * 100} % conflating on two sides) × ${EVENTS} events per round, ${ROUNDS} rounds each, alternating`);
console.log('| side | CPU per round, median (min–max) | ns per delivery to the 90 % | vs none |');
console.log('| --- | --- | --- | --- |');
for (const side of sides) {
  const t = timings.get(side) ?? [];
  const m = median(t);
  console.log(`| ${side} | ${(m / 1_000).toFixed(1)} ms (${(Math.min(...t) / 1_000).toFixed(1)}–${(Math.max(...t) / 1_000).toFixed(1)}) | ${((m * 1_000) / (EVENTS * plain)).toFixed(1)} | ${((m / base - 1) * 100).toFixed(1)} % |`);
}
console.log(`frames built ${frames}`);
process.exit(0); // the hubs keep timers (conflation polls): nothing else ends this process
