// Bandwidth (issue #18): permessage-deflate negotiated or not, and delta mode (fossil deltas
// computed once per operation group), against a real gateway over a real redis-server, with real
// `ws` clients reading the frames' exact text.
import net from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import WebSocket from 'ws';
import { createAuctionEventGenerator, type AuctionEventGenerator } from '@wirestream/demo-events';
import { DELTA_PAYLOAD_PREFIX, createDeltaReader } from '@wirestream/delta';
import { channelName, encodeEnvelope, historyAppendArgs, historyPartitionsKey, shardOf } from '@wirestream/wire';
import { createKeyTransformer } from '@wirestream/transform';
import { waitFor } from '@wirestream/testkit';
import { collect, startTestGateway, type ExecutionResult, type TestGateway } from './support/gateway.js';

/** Every field of ListingEvent (what dashboards select): ~2 KB payloads. */
const FULL =
  'subscription { listingUpdated { occurred_at event_id event_type listing_id listing { listing_id title description status category_path ' +
  'primary_property_id image_urls seller_info { seller_id display_name rating is_verified address { street_line1 address2_line city ' +
  'postal_code country_code } } reserve_price { amount_cents currency_code } current_price { amount_cents currency_code } ' +
  'recent_bids { bid_id bidder_id amount { amount_cents currency_code } placed_at is_auto_bid } } } }';
const HEAD = '{"id":"1","type":"next","payload":';
const RECOVERY = '{"extensions":{"recovery":';

interface RawSubscriber {
  readonly ws: WebSocket;
  /** The exact text of every `next` payload, in order. */
  readonly payloads: string[];
  /** Other frames (errors, completes). */
  readonly others: string[];
  /** Bytes read from the TCP socket: the wire, handshake included. */
  bytesRead(): number;
  readonly closed: Promise<void>;
}

/** A `ws` client speaking graphql-transport-ws by hand, so payloads are seen as the bytes sent. */
/** Closes every client a test opened, after each test whatever it asserted. */
const closers: (() => void)[] = [];
const closeOpened = (): void => {
  for (const close of closers.splice(0)) close();
};
afterEach(closeOpened);

function rawSubscriber(url: string, payload: Record<string, unknown>, perMessageDeflate: boolean): RawSubscriber {
  const sockets: net.Socket[] = [];
  const ws = new WebSocket(url, 'graphql-transport-ws', {
    perMessageDeflate,
    // Counts the bytes the TCP socket reads: what travelled, compressed or not.
    createConnection: ((options: net.NetConnectOpts) => {
      const socket = net.createConnection(options);
      sockets.push(socket);
      return socket;
    }) as typeof net.createConnection,
  });
  const payloads: string[] = [];
  const others: string[] = [];
  ws.on('open', () => ws.send('{"type":"connection_init"}'));
  ws.on('message', (data: Buffer) => {
    const text = data.toString('utf8');
    if (text.startsWith(HEAD)) payloads.push(text.slice(HEAD.length, -1));
    else if (text === '{"type":"connection_ack"}') ws.send(JSON.stringify({ id: '1', type: 'subscribe', payload }));
    else others.push(text);
  });
  const closed = new Promise<void>((resolve) =>
    ws.on('close', (code, reason) => {
      others.push(`closed ${code} ${reason.toString()}`);
      resolve();
    }),
  );
  ws.on('error', (err) => others.push(`error ${err.message}`));
  const subscriber = { ws, payloads, others, bytesRead: () => sockets.reduce((sum, s) => sum + s.bytesRead, 0), closed };
  closers.push(() => ws.close());
  return subscriber;
}

/** Publishes demo listing events as ingest would (history, then PUBLISH), all pipelined in order. */
function createDemoPublisher(t: TestGateway, listings: number) {
  const redis = new Redis(t.redisServer.url);
  const generator: AuctionEventGenerator = createAuctionEventGenerator({ seed: 7, listings });
  const transformer = createKeyTransformer();
  let offset = 0;
  return {
    /** Publishes `count` events without waiting between them (a burst the gateway may batch). */
    async publish(count: number): Promise<void> {
      const sent: Promise<unknown>[] = [];
      for (let i = 0; i < count; i++) {
        const event = generator.listingEvent();
        const current = String(offset++);
        const envelope = encodeEnvelope({ topic: t.topic, partition: 0, offset: current, key: event.key, ts: Date.now() }, JSON.stringify(transformer.transform(event.value)));
        const channel = channelName('ws', t.topic, shardOf(event.key, 16));
        sent.push(
          redis
            .multi()
            .call('XADD', ...historyAppendArgs('wsh', t.topic, 0, current, channel, envelope))
            .sadd(historyPartitionsKey('wsh', t.topic), '0')
            .publish(channel, envelope)
            .exec(),
        );
      }
      await Promise.all(sent);
    },
    close: () => redis.disconnect(),
  };
}

async function subscribed(t: TestGateway, count: number): Promise<void> {
  await waitFor(() => t.gateway.stats().subscriptions === count && t.gateway.stats().confirmedChannels === 16, { message: `${count} subscription(s) live` });
}

const reconstruct = (payloads: readonly string[]): string[] => {
  const reader = createDeltaReader();
  return payloads.map((p) => reader.readText(p)).filter((p) => !p.startsWith(RECOVERY));
};
const deltaCount = (payloads: readonly string[]): number => payloads.filter((p) => p.startsWith(DELTA_PAYLOAD_PREFIX)).length;
const offsetOf = (payload: string): string => (JSON.parse(payload) as { extensions: { position: { offset: string } } }).extensions.position.offset;
const epochOf = (payload: string): string => (JSON.parse(payload) as { extensions: { position: { epoch: string } } }).extensions.position.epoch;

describe('delta mode (GATEWAY_DELTA on, the default)', () => {
  let t: TestGateway;
  beforeAll(async () => {
    t = await startTestGateway();
  });
  afterAll(async () => {
    await t?.stop();
  });
  afterEach(async () => {
    closeOpened();
    await waitFor(() => t.gateway.stats().subscriptions === 0, { message: 'no subscription left over' });
  });

  it('delta subscribers reconstruct byte for byte what a full subscriber receives: from the start, joining mid-stream, resuming, via graphql-ws', async () => {
    const demo = createDemoPublisher(t, 4);
    const full = rawSubscriber(t.url, { query: FULL }, false);
    const early = rawSubscriber(t.url, { query: FULL, extensions: { delta: 'fossil' } }, false);
    const reader = createDeltaReader();
    const official = collect(t.connect(), FULL, undefined, { delta: 'fossil' });
    closers.push(() => official.dispose());
    await subscribed(t, 3);
    expect(t.gateway.stats().groups).toBe(1); // mixed delta and full subscribers share one operation

    await demo.publish(40);
    await waitFor(() => early.payloads.length === 40 && full.payloads.length === 40, { message: '40 events' });
    // The early subscriber's base for resuming: its 25th event.
    const resumeAt = offsetOf(reconstruct(early.payloads)[24] as string);
    const late = rawSubscriber(t.url, { query: FULL, extensions: { delta: 'fossil' } }, false);
    await subscribed(t, 4);
    await demo.publish(40);
    await waitFor(() => early.payloads.length === 80 && late.payloads.length === 40, { message: '80 events' });
    early.ws.close();
    await subscribed(t, 3);
    await demo.publish(20); // the early subscriber misses these: only history has them
    const epoch = epochOf(full.payloads[0] as string);
    const resumed = rawSubscriber(t.url, { query: FULL, extensions: { delta: 'fossil', resume: { epoch, positions: { '0': resumeAt } } } }, false);
    await subscribed(t, 4);
    await demo.publish(40);
    await waitFor(() => full.payloads.length === 140 && late.payloads.length === 100 && official.results.length === 140, { message: '140 events' });
    await waitFor(() => reconstruct(resumed.payloads).length === 140 - 25, { message: 'resumed: replay and live' });
    // After its catch-up the resumed subscriber gets deltas from the last payload the catch-up sent
    // it: the flush that ends the hold as well as the next ones (one event each, then a burst).
    for (const [count, resumedFrames] of [[1, 116], [1, 117], [18, 135]] as const) {
      await demo.publish(count);
      await waitFor(() => reconstruct(resumed.payloads).length === resumedFrames, { message: `resumed: ${resumedFrames} events` });
    }
    await waitFor(() => full.payloads.length === 160 && late.payloads.length === 120 && official.results.length === 160, { message: '160 events' });

    // Every kind of delta subscriber ends up with exactly the full subscriber's bytes.
    expect(full.payloads.every((p) => !p.startsWith(DELTA_PAYLOAD_PREFIX))).toBe(true);
    expect(reconstruct(early.payloads)).toEqual(full.payloads.slice(0, 80));
    expect(reconstruct(late.payloads)).toEqual(full.payloads.slice(40));
    expect(reconstruct(resumed.payloads)).toEqual(full.payloads.slice(25));
    expect(official.results.map((r) => reader.read(r))).toEqual(full.payloads.map((p) => JSON.parse(p) as ExecutionResult));
    // …and got deltas: all but the first (early), the first after joining (late), the catch-up (resumed).
    expect(early.payloads[0]).toBe(full.payloads[0]);
    expect(deltaCount(early.payloads)).toBeGreaterThan(70);
    expect(late.payloads[0]).toBe(full.payloads[40]);
    expect(deltaCount(late.payloads)).toBeGreaterThan(100);
    expect(resumed.payloads[0]?.startsWith(RECOVERY)).toBe(true);
    expect(deltaCount(resumed.payloads.slice(-20))).toBe(20);
    const bytes = (ps: readonly string[]): number => ps.reduce((sum, p) => sum + p.length, 0);
    // Consecutive events are mostly of different listings here: deltas share keys and URLs, not values.
    expect(bytes(late.payloads)).toBeLessThan(bytes(full.payloads.slice(40)) / 2);
    expect(t.gateway.stats().deltaFramesOut).toBeGreaterThan(300);
    demo.close();
  });

  it('a resumed delta subscriber gets its first live event as a delta from the last payload it received, alone in delta mode or not', async () => {
    // A gateway of its own: a topic whose offsets start at 0 again.
    const t = await startTestGateway();
    const demo = createDemoPublisher(t, 4);
    try {
      await resumeThenLive(t, demo);
    } finally {
      demo.close();
      closeOpened();
      await t.stop();
    }
  });

  async function resumeThenLive(t: TestGateway, demo: ReturnType<typeof createDemoPublisher>): Promise<void> {
    const full = rawSubscriber(t.url, { query: FULL }, false);
    await subscribed(t, 1);
    await demo.publish(10);
    await waitFor(() => full.payloads.length === 10, { message: '10 events' });
    const epoch = epochOf(full.payloads[0] as string);
    /** A delta subscriber resuming after the full subscriber's n-th event (history holds the rest). */
    const resumeAfter = (n: number): RawSubscriber =>
      rawSubscriber(t.url, { query: FULL, extensions: { delta: 'fossil', resume: { epoch, positions: { '0': offsetOf(full.payloads[n - 1] as string) } } } }, false);
    /** Publishes events one at a time, each written in a flush of its own, and waits for each. */
    const liveOneByOne = async (count: number, subscribers: readonly RawSubscriber[]): Promise<void> => {
      for (let i = 0; i < count; i++) {
        const received = subscribers.map((s) => s.payloads.length + 1);
        await demo.publish(1);
        await waitFor(() => subscribers.every((s, j) => s.payloads.length === received[j]), { message: 'one live event' });
      }
    };
    const kinds = (payloads: readonly string[]): string[] => payloads.map((p) => (p.startsWith(DELTA_PAYLOAD_PREFIX) ? 'delta' : p.startsWith(RECOVERY) ? 'recovery' : 'full'));

    // Alone in delta mode: the group has no base when the live events come; its own last replayed payload is one.
    const alone = resumeAfter(5);
    await subscribed(t, 2);
    await waitFor(() => alone.payloads.length === 1 + 5, { message: 'the recovery signal and five replayed events' });
    const before = t.gateway.stats().deltaFramesOut;
    await liveOneByOne(3, [alone]);
    expect(kinds(alone.payloads)).toEqual(['recovery', ...Array<string>(5).fill('full'), 'delta', 'delta', 'delta']);
    expect(t.gateway.stats().deltaFramesOut - before).toBe(3);

    // Beside a live delta subscriber: the group's base is the event its replay ended with. And one that
    // missed nothing was sent no payload, so it holds no base: its first live event comes in full.
    const beside = resumeAfter(8);
    const upToDate = resumeAfter(13);
    await subscribed(t, 4);
    await waitFor(() => beside.payloads.length === 1 + 5 && upToDate.payloads.length === 1, { message: 'the recovery signals and five replayed events' });
    await liveOneByOne(3, [alone, beside, upToDate]);
    expect(kinds(beside.payloads)).toEqual(['recovery', ...Array<string>(5).fill('full'), 'delta', 'delta', 'delta']);
    expect(kinds(upToDate.payloads)).toEqual(['recovery', 'full', 'delta', 'delta']);
    expect(t.gateway.stats().deltaFramesOut - before).toBe(11);

    // A client applying the frames ends up with exactly the full subscriber's payloads.
    await waitFor(() => full.payloads.length === 16, { message: '16 events' });
    expect(reconstruct(alone.payloads)).toEqual(full.payloads.slice(5));
    expect(reconstruct(beside.payloads)).toEqual(full.payloads.slice(8));
    expect(reconstruct(upToDate.payloads)).toEqual(full.payloads.slice(13));
  }

  it('refuses an unknown delta format with an error naming the accepted one', async () => {
    const bad = rawSubscriber(t.url, { query: FULL, extensions: { delta: 'xdelta3' } }, false);
    await waitFor(() => bad.others.length === 1, { message: 'an error message' });
    expect(JSON.parse(bad.others[0] as string)).toEqual({ id: '1', type: 'error', payload: [{ message: 'extensions.delta must be "fossil" (the only delta format), got "xdelta3"' }] });
  });
});

describe('permessage-deflate (GATEWAY_COMPRESSION)', () => {
  /** One plain and one deflate client on the same operation, same events: what each read from the wire. */
  async function compare(t: TestGateway, demo: ReturnType<typeof createDemoPublisher>, extensions: Record<string, unknown> = {}) {
    const plain = rawSubscriber(t.url, { query: FULL, extensions }, false);
    const deflate = rawSubscriber(t.url, { query: FULL, extensions }, true);
    await subscribed(t, 2);
    const before = { plain: plain.bytesRead(), deflate: deflate.bytesRead() };
    await demo.publish(30);
    await waitFor(() => plain.payloads.length === 30 && deflate.payloads.length === 30, { message: '30 events each' });
    const wire = { plain: plain.bytesRead() - before.plain, deflate: deflate.bytesRead() - before.deflate };
    const result = { plain, deflate, wire, extensions: { plain: plain.ws.extensions, deflate: deflate.ws.extensions } };
    plain.ws.close();
    deflate.ws.close();
    await Promise.all([plain.closed, deflate.closed]);
    await waitFor(() => t.gateway.stats().subscriptions === 0, { message: 'both gone' });
    return result;
  }

  it('shared compressor: a client offering permessage-deflate gets compressed frames, one not offering it plain ones, same payloads; GATEWAY_DELTA=false ignores extensions.delta', async () => {
    const t = await startTestGateway({ compression: 'shared', deltaEnabled: false });
    const demo = createDemoPublisher(t, 4);
    try {
      const r = await compare(t, demo, { delta: 'fossil' });
      expect(r.extensions).toEqual({ plain: '', deflate: expect.stringContaining('permessage-deflate') as string });
      expect(r.deflate.payloads).toEqual(r.plain.payloads);
      expect(deltaCount(r.plain.payloads)).toBe(0); // delta mode is off on this gateway
      // Each ~2 KB frame compressed alone: keys and URLs repeat within a payload.
      expect(r.wire.deflate).toBeLessThan(r.wire.plain * 0.7);
      expect(r.wire.plain).toBeGreaterThan(r.plain.payloads.reduce((sum, p) => sum + p.length, 0));
    } finally {
      demo.close();
      await t.stop();
    }
  });

  it('deflate with delta mode: deflated deltas still reconstruct exactly, and each saving adds to the other', async () => {
    const t = await startTestGateway({ compression: 'shared' });
    const demo = createDemoPublisher(t, 4);
    try {
      const full = await compare(t, demo);
      const delta = await compare(t, demo, { delta: 'fossil' });
      expect(reconstruct(delta.deflate.payloads)).toEqual(reconstruct(delta.plain.payloads));
      expect(deltaCount(delta.deflate.payloads)).toBeGreaterThan(20);
      expect(full.wire.deflate).toBeLessThan(full.wire.plain * 0.45);
      expect(delta.wire.plain).toBeLessThan(full.wire.plain * 0.45);
      expect(delta.wire.deflate).toBeLessThan(delta.wire.plain * 0.7);
    } finally {
      demo.close();
      await t.stop();
    }
  });
});
