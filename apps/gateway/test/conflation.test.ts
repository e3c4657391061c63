// Latest-value conflation in the hub on the real in-process bus: a connection without room keeps the
// newest payload per key (shared strings), gets them in offset order per partition with
// `extensions.conflated`, is never closed below the key bound, and is closed past it.
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { auctionSchemaPath, createWirestreamSchema, loadWirestreamSchema, type WirestreamSchema } from '@wirestream/schema';
import { channelName, encodeEnvelope, shardOf } from '@wirestream/wire';
import { createLogger, createMemorySink } from '@wirestream/telemetry';
import { waitFor } from '@wirestream/testkit';
import { createHub, createMemoryBus, createOperationCompiler, type CompiledSubscription, type ConnectionWriter } from '../src/index.js';

const schema = loadWirestreamSchema(auctionSchemaPath);
const TOPIC = 'listing-events';
const compiler = createOperationCompiler(schema);
const result = compiler.compile({ query: 'subscription { listingUpdated { listing_id event_type } }' });
if (!result.ok || result.operation.kind !== 'subscription') throw new Error('does not compile');
const ALL: CompiledSubscription = result.operation;

interface Frame {
  payload: { data?: { listingUpdated: { listing_id: string; event_type: string } }; extensions?: { position?: { partition: number; offset: string }; conflated?: number } };
}
interface TestConn {
  readonly frames: Frame[];
  /** performance.now() of each frame. */
  readonly times: number[];
  /** The connection takes frames (false: its buffer is full). */
  room: boolean;
  closed: { code: number; reason: string } | undefined;
}
const conn = (): TestConn => ({ frames: [], times: [], room: true, closed: undefined });

function setup(conflateMaxKeys = 10_000, maxRateCeiling = 1_000, withSchema: WirestreamSchema = schema) {
  const bus = createMemoryBus();
  const writer: ConnectionWriter<TestConn> = {
    send: (c, frame) => void c.frames.push(JSON.parse(frame) as Frame),
    sendFrames(c, head, payloads) {
      for (const payload of payloads) {
        c.frames.push(JSON.parse(head + payload + '}') as Frame);
        c.times.push(performance.now());
      }
    },
    close(c, code, reason) {
      c.closed = { code, reason };
    },
    hasRoom: (c) => c.room,
    replayChunkBytes: 4_096,
  };
  const hub = createHub<TestConn>({ schema: withSchema, broker: bus.broker, history: bus.history, logger: createLogger({ name: 'conflation-test', destination: createMemorySink() }), writer, conflateMaxKeys, maxRateCeiling });
  const offset = new Map<number, number>();
  const publish = (listingId: string, partition = 0): string => {
    const next = offset.get(partition) ?? 0;
    offset.set(partition, next + 1);
    const at = String(next);
    const text = encodeEnvelope({ topic: TOPIC, partition, offset: at, key: listingId, ts: Date.now() }, JSON.stringify({ listing_id: listingId, event_type: `e${partition}-${at}` }));
    bus.publish(channelName('ws', TOPIC, shardOf(listingId, 16)), text, { topic: TOPIC, partition, offset: at });
    return at;
  };
  return { hub, publish };
}

const positions = (c: TestConn): string[] => c.frames.flatMap((f) => (f.payload.extensions?.position ? [`${f.payload.extensions.position.partition}:${f.payload.extensions.position.offset}`] : []));

describe('latest-value conflation (extensions.conflate)', () => {
  it('keeps the newest payload per key while the connection has no room, then sends them in offset order with the count', async () => {
    const { hub, publish } = setup();
    const dashboard = conn();
    const feed = conn();
    hub.subscribe(dashboard, 'd', ALL, { conflate: true });
    hub.subscribe(feed, 'f', ALL);
    await waitFor(() => hub.stats().confirmedChannels === 16, { message: 'channels confirmed' });
    publish('a');
    await waitFor(() => dashboard.frames.length === 1, { message: 'a live frame while there is room' });
    dashboard.room = false;
    // 0:1 a, 0:2 b, 0:3 a, 0:4 c, 0:5 a, 1:0 d, 1:1 d, 0:6 b
    for (const [key, partition] of [['a', 0], ['b', 0], ['a', 0], ['c', 0], ['a', 0], ['d', 1], ['d', 1], ['b', 0]] as const) publish(key, partition);
    await waitFor(() => feed.frames.length === 9, { message: 'the plain subscriber got every event' });
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(dashboard.frames).toHaveLength(1);
    expect(dashboard.closed).toBeUndefined();
    dashboard.room = true;
    await waitFor(() => dashboard.frames.length === 5, { message: 'one frame per key once room came' });
    // Per partition in offset order: c@4, a@5, b@6; d@1. Each with how many of its key it replaced.
    const sent = dashboard.frames.slice(1).map((f) => `${f.payload.data?.listingUpdated.listing_id}@${f.payload.extensions?.position?.partition}:${f.payload.extensions?.position?.offset}/${f.payload.extensions?.conflated ?? 0}`);
    expect(sent).toEqual(['c@0:4/0', 'a@0:5/2', 'b@0:6/1', 'd@1:1/1']);
    expect(hub.stats().conflated).toBe(4);
    // Live again: frames flow as they come.
    publish('a');
    await waitFor(() => dashboard.frames.length === 6, { message: 'live again' });
    expect(positions(dashboard).at(-1)).toBe('0:7');
  });

  it('is never closed below its key bound however many events wait; past it, the slow-consumer close', async () => {
    const { hub, publish } = setup(50);
    const dashboard = conn();
    hub.subscribe(dashboard, 'd', ALL, { conflate: true });
    await waitFor(() => hub.stats().confirmedChannels === 16, { message: 'channels confirmed' });
    dashboard.room = false;
    for (let i = 0; i < 5_000; i++) publish(`lst-${i % 50}`);
    await waitFor(() => hub.stats().eventsIn === 5_000, { message: 'every event in' });
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(dashboard.closed).toBeUndefined();
    dashboard.room = true;
    await waitFor(() => dashboard.frames.length === 50, { message: "every key's latest value" });
    expect(dashboard.frames.map((f) => f.payload.data?.listingUpdated.event_type).sort()).toEqual(Array.from({ length: 50 }, (_, i) => `e0-${4_950 + i}`).sort());
    expect(dashboard.frames.every((f) => f.payload.extensions?.conflated === 99)).toBe(true);
    dashboard.room = false;
    publish('one-key-too-many');
    for (let i = 0; i < 50; i++) publish(`lst-${i}`);
    await waitFor(() => dashboard.closed !== undefined, { message: 'closed past the bound' });
    expect(dashboard.closed).toMatchObject({ code: 1013, reason: expect.stringContaining('GATEWAY_CONFLATE_MAX_KEYS') as unknown });
  });

  it('maxRate 2 at 1,000 events/s: at most 2 frames a second (give or take one), and every key ends at its last value', async () => {
    const { hub, publish } = setup();
    const capped = conn();
    hub.subscribe(capped, 'c', ALL, { maxRate: 2, start: true });
    await waitFor(() => hub.stats().confirmedChannels === 16, { message: 'channels confirmed' });
    const last = new Map<string, string>();
    const started = performance.now();
    for (let tick = 0; performance.now() - started < 2_500; tick++) {
      for (let i = 0; i < 10; i++) {
        const key = `k${(tick * 10 + i) % 3}`;
        last.set(key, `e0-${publish(key)}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const valueOf = (key: string): string | undefined => [...capped.frames].reverse().find((f) => f.payload.data?.listingUpdated.listing_id === key)?.payload.data?.listingUpdated.event_type;
    await waitFor(() => [...last].every(([key, value]) => valueOf(key) === value), { timeoutMs: 5_000, message: 'every key at its last value' });
    const perSecond = Math.max(...capped.times.map((t) => capped.times.filter((u) => u >= t && u < t + 1_000).length));
    expect(perSecond).toBeLessThanOrEqual(3);
    expect(capped.frames.length).toBeLessThan(12);
    expect(hub.stats().rateCapped).toBeGreaterThan(1_000);
    expect(positionsRise(capped)).toBe(true);
  });

  it('lowers a maxRate above the server ceiling to it', async () => {
    const { hub, publish } = setup(10_000, 1);
    const capped = conn();
    hub.subscribe(capped, 'c', ALL, { maxRate: 500 });
    await waitFor(() => hub.stats().confirmedChannels === 16, { message: 'channels confirmed' });
    for (let i = 0; i < 3; i++) publish(`k${i}`);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(capped.frames).toHaveLength(1);
  });

  it('@topic(conflate: true) makes it the field default; extensions.conflate: false opts out', async () => {
    const sdl = readFileSync(auctionSchemaPath, 'utf8')
      .replace('keyFormat: TopicKeyFormat = STRING) on FIELD_DEFINITION', 'keyFormat: TopicKeyFormat = STRING, conflate: Boolean = false) on FIELD_DEFINITION')
      .replace('@topic(name: "listing-events", key: "listing_id")', '@topic(name: "listing-events", key: "listing_id", conflate: true)');
    const conflating = createWirestreamSchema(sdl);
    expect(conflating.routes.get('listingUpdated')?.conflate).toBe(true);
    const compiled = createOperationCompiler(conflating).compile({ query: 'subscription { listingUpdated { listing_id event_type } }' });
    if (!compiled.ok || compiled.operation.kind !== 'subscription') throw new Error('does not compile');
    const { hub, publish } = setup(10_000, 1_000, conflating);
    const byDefault = conn();
    const optedOut = conn();
    hub.subscribe(byDefault, 'd', compiled.operation);
    hub.subscribe(optedOut, 'o', compiled.operation, { conflate: false });
    await waitFor(() => hub.stats().confirmedChannels === 16, { message: 'channels confirmed' });
    byDefault.room = false;
    optedOut.room = false;
    for (let i = 0; i < 10; i++) publish('a');
    await waitFor(() => optedOut.frames.length === 10, { message: 'the opted-out one gets every event' });
    byDefault.room = true;
    await waitFor(() => byDefault.frames.length === 1, { message: 'the default one the latest' });
    expect(byDefault.frames[0]?.payload.extensions?.conflated).toBe(9);
  });
});


/** Per partition, offsets strictly rising. */
function positionsRise(c: TestConn): boolean {
  const last = new Map<number, number>();
  return c.frames.every((f) => {
    const position = f.payload.extensions?.position;
    if (!position) return true;
    const before = last.get(position.partition) ?? -1;
    last.set(position.partition, Number(position.offset));
    return Number(position.offset) > before;
  });
}
