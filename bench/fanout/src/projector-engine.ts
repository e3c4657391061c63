#!/usr/bin/env node
/**
 * µs of CPU per extra distinct operation per event inside the fan-out engine (issue 18), in one
 * process: the real hub (`createHub` on the in-process bus) with 1 and with K distinct operations
 * (2 subscribers each at K = 1,000, like the sweep's 2,000 sockets), fed the same demo envelopes, with
 * each operation's projector and with it taken away (`execute`, the gateway before), alternating
 * rounds. The writer lays out every frame as the gateway's does (a group's payloads encoded to
 * UTF-8 once, each frame `head + payload + '}'` copied into a scratch buffer) and drops it, so
 * uWS, sockets and the load client are out of the figure.
 *
 *   node bench/fanout/dist/projector-engine.js [--sockets 2000] [--distinct 1000] [--events 200] [--rounds 5] [--paths execute,projector]
 */
import { createAuctionEventGenerator } from '@wirestream/demo-events';
import { createHub, createMemoryBus, createOperationCompiler, type CompiledSubscription, type ConnectionWriter } from '@wirestream/gateway/internals';
import { FULL_SELECTION } from '@wirestream/loadgen';
import { auctionSchemaPath, loadWirestreamSchema } from '@wirestream/schema';
import { channelName, shardOf } from '@wirestream/wire';
import { createLogger } from '@wirestream/telemetry';
import { createKeyTransformer } from '@wirestream/transform';
import { markdownTable, median, parseCli } from '@wirestream/bench-kit';


const { values } = parseCli({
  options: {
    sockets: { type: 'string', default: '2000' },
    distinct: { type: 'string', default: '1000' },
    events: { type: 'string', default: '200' },
    rounds: { type: 'string', default: '5' },
    // e.g. `--paths projector` with `node --cpu-prof` to profile one path alone
    paths: { type: 'string', default: 'execute,projector' },
  },
});
const PATHS = new Set(values.paths.split(','));
const SOCKETS = Number(values.sockets);
const DISTINCT = Number(values.distinct);
const EVENTS = Number(values.events);
const ROUNDS = Number(values.rounds);

const schema = loadWirestreamSchema(auctionSchemaPath);
const listingRoute = schema.routesForTopic('listing-events')[0];
if (!listingRoute) throw new Error('the example schema has no listing-events route');
const route = listingRoute;
const generator = createAuctionEventGenerator({ seed: 42, listings: 50 });
const transformer = createKeyTransformer();
const events = Array.from({ length: EVENTS }, (_, i) => {
  const event = generator.listingEvent();
  return { channel: channelName('ws', route.topic, shardOf(event.key, route.shards)), key: event.key, partition: i % 6, payload: JSON.stringify(transformer.transform(event.value)) };
});

let bytes = 0;
let frames = 0;
let encodedFor: readonly string[] | undefined;
let encoded: Buffer[] = [];
const scratch = Buffer.allocUnsafe(1 << 20);
const writer: ConnectionWriter<object> = {
  send: () => undefined,
  // As the gateway's writer lays frames out (decision 0021): a group's payloads encoded once (the
  // hub hands every subscriber of a group the same array), each frame copied into one scratch buffer.
  sendFrames: (_conn, head, payloads) => {
    if (payloads !== encodedFor) {
      encoded = payloads.map((payload) => Buffer.from(payload, 'utf8'));
      encodedFor = payloads;
    }
    for (const payload of encoded) {
      const at = scratch.write(head, 0);
      if (at + payload.length + 1 > scratch.length) throw new Error('a frame larger than the scratch buffer');
      scratch.set(payload, at);
      scratch[at + payload.length] = 0x7d; // '}'
      bytes += at + payload.length + 1;
    }
    frames += payloads.length;
  },
  close: () => undefined,
  hasRoom: () => true,
  replayChunkBytes: 65_536,
};

/** The sweep's operations: the full selection, distinct only by name. */
function operations(distinct: number, projected: boolean): CompiledSubscription[] {
  const compiler = createOperationCompiler(schema, { channelPrefix: 'ws' });
  return Array.from({ length: distinct }, (_, i) => {
    const result = compiler.compile({ query: `subscription Listings${i} { listingUpdated { ${FULL_SELECTION} } }`, operationName: `Listings${i}` });
    if (!result.ok || result.operation.kind !== 'subscription') throw new Error(`does not compile: ${JSON.stringify(result)}`);
    if (!result.operation.projector) throw new Error('the sweep operation has no projector');
    return projected ? result.operation : { ...result.operation, projector: undefined };
  });
}

async function engine(distinct: number, projected: boolean) {
  const bus = createMemoryBus();
  const hub = createHub<object>({ schema, broker: bus.broker, logger: createLogger({ name: 'bench', level: 'error' }), writer });
  const ops = operations(distinct, projected);
  for (let i = 0; i < SOCKETS; i++) hub.subscribe({}, String(i), ops[i % distinct] as CompiledSubscription);
  while (hub.stats().confirmedChannels < route.shards) await new Promise((resolve) => setImmediate(resolve));
  return bus;
}

let offset = 0;
/**
 * CPU µs per event: the corpus in bursts of 50 (as ioredis hands over socket reads), then until
 * every subscriber has every event (the hub works in time slices across turns, decision 0013).
 */
async function round(bus: Awaited<ReturnType<typeof engine>>): Promise<number> {
  const started = process.cpuUsage();
  const target = frames + events.length * SOCKETS;
  for (let i = 0; i < events.length; i += 50) {
    for (const event of events.slice(i, i + 50)) {
      bus.publish(event.channel, `{"v":1,"topic":"listing-events","partition":${event.partition},"offset":"${offset++}","key":${JSON.stringify(event.key)},"ts":${Date.now()},"payload":${event.payload}}`);
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
  while (frames < target) await new Promise((resolve) => setImmediate(resolve));
  if (frames !== target) throw new Error(`${frames - target} frames more than the subscribers' events`);
  const used = process.cpuUsage(started);
  return (used.user + used.system) / events.length;
}

const sides = (
  [
    ['execute', 1, false],
    ['execute', DISTINCT, false],
    ['projector', 1, true],
    ['projector', DISTINCT, true],
  ] as const
).filter(([path]) => PATHS.has(path));
const buses = [];
for (const [, distinct, projected] of sides) buses.push(await engine(distinct, projected));
for (const bus of buses) await round(bus); // warm-up: JIT every path
const samples = sides.map(() => [] as number[]);
for (let r = 0; r < ROUNDS; r++) {
  for (let k = 0; k < sides.length; k++) {
    const s = (k + r) % sides.length;
    samples[s]?.push(await round(buses[s] as Awaited<ReturnType<typeof engine>>));
  }
}
const medians = samples.map(median);
const perOp = (one: number, many: number): string => ((many - one) / (DISTINCT - 1)).toFixed(2);
const rows: string[][] = [['path', 'CPU µs / event, 1 op', `CPU µs / event, ${DISTINCT} ops`, 'µs per extra operation per event']];
for (let s = 0; s < sides.length; s += 2) {
  const [one, many] = [medians[s] as number, medians[s + 1] as number];
  rows.push([sides[s]?.[0] === 'execute' ? 'execute (before)' : 'projector', one.toFixed(0), many.toFixed(0), perOp(one, many)]);
}
console.log(`\nfan-out engine, ${SOCKETS} subscribers, 1 vs ${DISTINCT} distinct operations (full selection), ${EVENTS} demo events per round, ${ROUNDS} rounds, node ${process.version}\n`);
console.log(markdownTable(rows));
console.log(`\nframes copied: ${(bytes / 1e9).toFixed(2)} GB`);
process.exit(0);
