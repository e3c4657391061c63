import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { channelName, encodeEnvelope, encodeEnvelopeBatch, historyAppendArgs, historyBatchArgs, historyPartitionsKey, historyStreamKey, shardOf } from '@wirestream/wire';
import { waitFor } from '@wirestream/testkit';
import { collect, rawSocket, startTestGateway, type ExecutionResult, type TestGateway } from './support/gateway.js';

const QUERY = 'subscription { listingUpdated { listing_id event_id } }';

interface Position {
  topic: string;
  partition: number;
  offset: string;
  epoch: string;
}
const positionOf = (r: ExecutionResult): Position | undefined => (r.extensions as { position?: Position } | undefined)?.position;
const recoveryOf = (r: ExecutionResult) =>
  (r.extensions as { recovery?: { recovered: boolean; reason?: string; partitions?: number[]; epoch?: string } } | undefined)?.recovery;
const offsets = (results: readonly ExecutionResult[]): string[] => results.flatMap((r) => (positionOf(r) ? [positionOf(r)?.offset as string] : []));

let t: TestGateway;
beforeAll(async () => {
  t = await startTestGateway({ maxBackpressureBytes: 16_384 });
});
afterAll(async () => {
  await t?.stop();
});
// Each test counts its own subscriptions: wait until the previous test's are gone.
afterEach(async () => {
  await waitFor(() => t.gateway.stats().subscriptions === 0, { message: 'no subscription left over' });
});

async function subscribed(count: number): Promise<void> {
  await waitFor(() => t.gateway.stats().subscriptions === count && t.gateway.stats().confirmedChannels === 16, { message: `${count} subscription(s) live` });
}

async function publishMany(from: number, count: number): Promise<string[]> {
  const published: string[] = [];
  for (let i = 0; i < count; i++) published.push(await t.publishListing(`lst-${(from + i) % 7}`));
  return published;
}

describe('resume from history', () => {
  it('replays exactly what a client missed, then continues live: no gap, no duplicate', async () => {
    const first = collect(t.connect(), QUERY);
    await subscribed(1);
    const before = await publishMany(0, 5);
    await waitFor(() => first.results.length === 5, { message: 'first 5 events' });
    const last = positionOf(first.results[4] as ExecutionResult) as Position;
    first.dispose();
    await waitFor(() => t.gateway.stats().subscriptions === 0, { message: 'first subscription gone' });

    const missed = await publishMany(5, 6); // published while nobody listened: only history has them
    const resumed = collect(t.connect(), QUERY, undefined, { resume: { epoch: last.epoch, positions: { [last.partition]: last.offset } } });
    await waitFor(() => resumed.results.length === 7, { message: 'recovery signal + 6 missed events' });
    expect(recoveryOf(resumed.results[0] as ExecutionResult)).toEqual({ recovered: true, epoch: last.epoch });
    expect(offsets(resumed.results)).toEqual(missed);

    const live = await publishMany(11, 2);
    await waitFor(() => resumed.results.length === 9, { message: 'live events after the replay' });
    expect(offsets(resumed.results)).toEqual([...missed, ...live]);
    expect(offsets(first.results)).toEqual(before);
    resumed.dispose();
  });

  it('meets live traffic without a gap or duplicate while it replays', async () => {
    const watcher = collect(t.connect(), QUERY);
    await subscribed(1);
    const start = await t.publishListing('lst-1');
    await waitFor(() => watcher.results.length === 1, { message: 'first event' });
    const position = positionOf(watcher.results[0] as ExecutionResult) as Position;
    const backlog = await publishMany(0, 300);
    // Resume from the first event while more events keep arriving.
    const resumed = collect(t.connect(), QUERY, undefined, { resume: { epoch: position.epoch, positions: { '0': start } } });
    const during = await publishMany(300, 100);
    const expected = [...backlog, ...during];
    await waitFor(() => offsets(resumed.results).length === expected.length, { message: 'every event once', timeoutMs: 20_000 });
    if (process.env.DEBUG_RESUME) console.log(JSON.stringify(resumed.results.map((r) => positionOf(r)?.offset ?? "R")));
    expect(offsets(resumed.results)).toEqual(expected);
    watcher.dispose();
    resumed.dispose();
  });

  it('says recovered: false when retention dropped part of the gap, and sends what it still has', async () => {
    const first = collect(t.connect(), QUERY);
    await subscribed(1);
    await publishMany(0, 2);
    await waitFor(() => first.results.length === 2, { message: 'two events' });
    const last = positionOf(first.results[1] as ExecutionResult) as Position;
    first.dispose();
    await waitFor(() => t.gateway.stats().subscriptions === 0, { message: 'gone' });
    const missed = await publishMany(2, 10);
    await t.trimHistory(3); // as MAXLEN would after a long absence
    const resumed = collect(t.connect(), QUERY, undefined, { resume: { epoch: last.epoch, positions: { '0': last.offset } } });
    await waitFor(() => resumed.results.length === 4, { message: 'signal + 3 retained events' });
    expect(recoveryOf(resumed.results[0] as ExecutionResult)).toMatchObject({ recovered: false, partitions: [0] });
    expect(offsets(resumed.results)).toEqual(missed.slice(-3));
    resumed.dispose();
  });

  it('says recovered: false when the epoch changed (the history was lost)', async () => {
    const resumed = collect(t.connect(), QUERY, undefined, { resume: { epoch: 'an-epoch-of-another-life', positions: { '0': '1' } } });
    await waitFor(() => resumed.results.length >= 1, { message: 'recovery signal' });
    expect(recoveryOf(resumed.results[0] as ExecutionResult)).toMatchObject({ recovered: false, reason: expect.stringContaining('epoch') as unknown });
    resumed.dispose();
    await waitFor(() => t.gateway.stats().subscriptions === 0, { message: 'gone' });
  });

  it('rejects a malformed resume request with an error naming the field', async () => {
    const bad = collect(t.connect(), QUERY, undefined, { resume: { epoch: 'e', positions: { zero: '1' } } });
    await waitFor(() => bad.errors.length === 1, { message: 'an error' });
    expect(JSON.stringify(bad.errors[0])).toContain('is not a partition number');
    const worse = collect(t.connect(), QUERY, undefined, { resume: { epoch: 'e', positions: { '0': 'x' } } });
    await waitFor(() => worse.errors.length === 1, { message: 'an error' });
    expect(JSON.stringify(worse.errors[0])).toContain('decimal string');
  });
});

describe('batch history entries (one per ingest chunk, what ingest writes)', () => {
  const PARTITION = 3;
  /** Stores offsets [from, to] of a partition (3 unless said) as one batch entry, as ingest does for a chunk (nothing live: only history has them). */
  async function storeChunk(publisher: Redis, from: number, to: number, partition = PARTITION): Promise<void> {
    const offsets: string[] = [];
    const shards: number[] = [];
    const envelopes: Buffer[] = [];
    for (let i = from; i <= to; i++) {
      const listingId = `lst-${i % 5}`;
      const payload = JSON.stringify({ event_id: `batch-${i}`, event_type: 'ListingUpdated', listing_id: listingId, occurred_at: 'now' });
      offsets.push(String(i));
      shards.push(shardOf(listingId, 16));
      envelopes.push(Buffer.from(encodeEnvelope({ topic: t.topic, partition, offset: String(i), key: listingId, ts: Date.now() }, payload)));
    }
    const parts = encodeEnvelopeBatch(partition, offsets, shards, envelopes).map((p) => ({ channel: channelName('ws', t.topic, p.shard), bytes: p.bytes }));
    await publisher.call('XADD', ...historyBatchArgs(historyStreamKey('wsh', t.topic, partition), String(to), parts));
    await publisher.sadd(historyPartitionsKey('wsh', t.topic), String(partition));
  }
  const ofPartition = (results: readonly ExecutionResult[], partition = PARTITION): string[] =>
    results.flatMap((r) => (positionOf(r)?.partition === partition ? [positionOf(r)?.offset as string] : []));
  const range = (from: number, to: number): string[] => Array.from({ length: to - from + 1 }, (_, i) => String(from + i));

  it('resumes exactly after a position inside a batch, and replays an offset stored twice (a redone chunk) once; lostAfter reads the oldest event, not the id', async () => {
    const publisher = new Redis(t.redisServer.url);
    try {
      await storeChunk(publisher, 0, 4);
      await storeChunk(publisher, 5, 9);
      // Another owner redid the chunk from 3 with other boundaries: 3–9 are stored a second time.
      await storeChunk(publisher, 3, 12);
      const probe = collect(t.connect(), QUERY);
      await subscribed(1);
      await t.publishListing('lst-epoch'); // only to learn the epoch from a position
      await waitFor(() => probe.results.length === 1, { message: 'the probe event' });
      const { epoch } = positionOf(probe.results[0] as ExecutionResult) as Position;
      probe.dispose();
      await waitFor(() => t.gateway.stats().subscriptions === 0, { message: 'probe gone' });

      const inside = collect(t.connect(), QUERY, undefined, { resume: { epoch, positions: { [PARTITION]: '6' } } });
      await waitFor(() => ofPartition(inside.results).length === 6, { message: 'offsets 7–12' });
      expect(recoveryOf(inside.results[0] as ExecutionResult)).toMatchObject({ recovered: true });
      // Nothing more arrives for the partition: every offset once, in order.
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(ofPartition(inside.results)).toEqual(range(7, 12));
      inside.dispose();
      await waitFor(() => t.gateway.stats().subscriptions === 0, { message: 'gone' });

      // Retention took the first entry (0–4): its id is 4-1, the next entry's 9-1 holds 5 onwards.
      await publisher.xtrim(historyStreamKey('wsh', t.topic, PARTITION), 'MINID', '5-0');
      const covered = collect(t.connect(), QUERY, undefined, { resume: { epoch, positions: { [PARTITION]: '4' } } });
      await waitFor(() => ofPartition(covered.results).length === 8, { message: 'offsets 5–12' });
      expect(recoveryOf(covered.results[0] as ExecutionResult)).toMatchObject({ recovered: true });
      expect(ofPartition(covered.results)).toEqual(range(5, 12));
      covered.dispose();
      await waitFor(() => t.gateway.stats().subscriptions === 0, { message: 'gone' });

      const gap = collect(t.connect(), QUERY, undefined, { resume: { epoch, positions: { [PARTITION]: '2' } } });
      await waitFor(() => ofPartition(gap.results).length === 8, { message: 'what history still has: 5–12' });
      expect(recoveryOf(gap.results[0] as ExecutionResult)).toMatchObject({ recovered: false, partitions: [PARTITION] });
      expect(ofPartition(gap.results)).toEqual(range(5, 12));
      gap.dispose();
    } finally {
      publisher.disconnect();
    }
  });
});

describe('batch history entries, many of them', () => {
  it('replays every event once across pages sized in chunks (a page holds about 500 events, not 500 entries)', async () => {
    const partition = 4;
    const publisher = new Redis(t.redisServer.url);
    const writer = async (from: number, to: number): Promise<void> => {
      const offsets: string[] = [];
      const shards: number[] = [];
      const envelopes: Buffer[] = [];
      for (let i = from; i <= to; i++) {
        const listingId = `lst-${i % 9}`;
        const payload = JSON.stringify({ event_id: `many-${i}`, event_type: 'ListingUpdated', listing_id: listingId, occurred_at: 'now' });
        offsets.push(String(i));
        shards.push(shardOf(listingId, 16));
        envelopes.push(Buffer.from(encodeEnvelope({ topic: t.topic, partition, offset: String(i), key: listingId, ts: Date.now() }, payload)));
      }
      const parts = encodeEnvelopeBatch(partition, offsets, shards, envelopes).map((p) => ({ channel: channelName('ws', t.topic, p.shard), bytes: p.bytes }));
      await publisher.call('XADD', ...historyBatchArgs(historyStreamKey('wsh', t.topic, partition), String(to), parts));
    };
    try {
      for (let chunk = 0; chunk < 24; chunk++) await writer(chunk * 100, chunk * 100 + 99);
      await publisher.sadd(historyPartitionsKey('wsh', t.topic), String(partition));
      const probe = collect(t.connect(), QUERY);
      await subscribed(1);
      await t.publishListing('lst-epoch-2');
      await waitFor(() => probe.results.length === 1, { message: 'the probe event' });
      const { epoch } = positionOf(probe.results[0] as ExecutionResult) as Position;
      probe.dispose();
      await waitFor(() => t.gateway.stats().subscriptions === 0, { message: 'probe gone' });
      const resumed = collect(t.connect(), QUERY, undefined, { resume: { epoch, positions: { [partition]: '49' } } });
      const got = (): string[] => resumed.results.flatMap((r) => (positionOf(r)?.partition === partition ? [positionOf(r)?.offset as string] : []));
      await waitFor(() => got().length === 2_350, { message: 'offsets 50–2399', timeoutMs: 20_000 });
      expect(got()).toEqual(Array.from({ length: 2_350 }, (_, i) => String(50 + i)));
      resumed.dispose();
    } finally {
      publisher.disconnect();
    }
  });
});

describe('a large replay', () => {
  it('is paced by the socket: a client that reads is never closed as slow (4 MB through a 16 KiB limit)', async () => {
    const query = 'subscription { listingUpdated { occurred_at } }';
    const publisher = new Redis(t.redisServer.url);
    const big = 'y'.repeat(2_000);
    const publishBig = async (from: number, count: number): Promise<string[]> => {
      const pipeline = publisher.pipeline();
      const offsets: string[] = [];
      for (let i = from; i < from + count; i++) {
        const offset = String(i);
        const payload = JSON.stringify({ event_id: `r-${i}`, event_type: 'ListingUpdated', listing_id: 'lst-replay', occurred_at: big });
        const envelope = encodeEnvelope({ topic: t.topic, partition: 2, offset, key: 'lst-replay', ts: Date.now() }, payload);
        const channel = channelName('ws', t.topic, shardOf('lst-replay', 16));
        pipeline.call('XADD', ...historyAppendArgs('wsh', t.topic, 2, offset, channel, envelope));
        pipeline.sadd(historyPartitionsKey('wsh', t.topic), '2');
        pipeline.publish(channel, envelope);
        offsets.push(offset);
      }
      await pipeline.exec();
      return offsets;
    };
    const first = collect(t.connect(), query);
    await subscribed(1);
    const seen = await publishBig(0, 1);
    await waitFor(() => first.results.length === 1, { message: 'first event' });
    const { epoch } = positionOf(first.results[0] as ExecutionResult) as Position;
    first.dispose();
    await waitFor(() => t.gateway.stats().subscriptions === 0, { message: 'gone' });
    const missed = await publishBig(1, 2_000);
    const resumed = collect(t.connect(), query, undefined, { resume: { epoch, positions: { '2': seen[0] } } });
    // Only partition 2 has a position here; the others are replayed from what history holds (documented).
    const ofPartition2 = (): string[] => resumed.results.flatMap((r) => (positionOf(r)?.partition === 2 ? [positionOf(r)?.offset as string] : []));
    await waitFor(() => ofPartition2().length === missed.length, { message: 'the whole replay', timeoutMs: 30_000 });
    expect(ofPartition2()).toEqual(missed);
    expect(resumed.errors).toEqual([]);
    expect(resumed.isComplete()).toBe(false); // still subscribed: not closed as a slow consumer
    expect(recoveryOf(resumed.results[0] as ExecutionResult)).toMatchObject({ recovered: true });
    publisher.disconnect();
    resumed.dispose();
  }, 60_000);
});

describe('Redis reconnect', () => {
  it('back-fills from history what was published while the subscriber connection was down', async () => {
    const sub = collect(t.connect(), QUERY);
    await subscribed(1);
    const before = await publishMany(0, 3);
    await waitFor(() => sub.results.length === 3, { message: 'first events' });
    const admin = new Redis(t.redisServer.url);
    // Cut the gateway's pub/sub connection, then publish while it reconnects: pub/sub drops these.
    await admin.client('KILL', 'TYPE', 'pubsub');
    const during = await publishMany(3, 20);
    admin.disconnect();
    await waitFor(() => t.gateway.isReady(), { message: 'gateway reconnected' });
    const after = await publishMany(23, 3);
    await waitFor(() => offsets(sub.results).length === 26, { message: 'all 26 events', timeoutMs: 20_000 });
    expect(offsets(sub.results)).toEqual([...before, ...during, ...after]);
    expect(t.gateway.stats().backfilled).toBeGreaterThan(0);
    sub.dispose();
    await waitFor(() => t.gateway.stats().subscriptions === 0, { message: 'gone' });
  });
});

describe('slow consumers', () => {
  it('closes a client that stops reading with 1013 and a resume hint; others get everything', async () => {
    const query = 'subscription { listingUpdated { occurred_at } }';
    const healthy = collect(t.connect(), query);
    const slow = rawSocket(t.url);
    await slow.opened;
    slow.ws.send(JSON.stringify({ type: 'connection_init' }));
    await waitFor(() => slow.messages.length === 1, { message: 'ack' });
    slow.ws.send(JSON.stringify({ id: 's', type: 'subscribe', payload: { query } }));
    await subscribed(2);
    // Stop reading: the kernel's socket buffers fill, then the server's per-socket limit (16 KiB here).
    (slow.ws as unknown as { _socket: { pause(): void } })._socket.pause();
    const publisher = new Redis(t.redisServer.url);
    const big = 'x'.repeat(8_000);
    const events = 2_000; // 16 MB for the stalled socket: far past any kernel buffer
    for (let i = 0; i < events; i += 100) {
      const pipeline = publisher.pipeline();
      for (let j = i; j < i + 100; j++) {
        const payload = JSON.stringify({ event_id: `big-${j}`, event_type: 'ListingUpdated', listing_id: 'lst-big', occurred_at: big });
        pipeline.publish(channelName('ws', t.topic, shardOf('lst-big', 16)), encodeEnvelope({ topic: t.topic, partition: 1, offset: String(j), key: 'lst-big', ts: Date.now() }, payload));
      }
      await pipeline.exec();
    }
    publisher.disconnect();
    await waitFor(() => healthy.results.length === events, { message: 'healthy client gets all', timeoutMs: 30_000 });
    (slow.ws as unknown as { _socket: { resume(): void } })._socket.resume();
    const closed = await slow.closed;
    expect(closed).toEqual({ code: 1013, reason: 'slow consumer: reconnect and resume from your last position' });
    expect(offsets(healthy.results)).toEqual(Array.from({ length: events }, (_, i) => String(i)));
    healthy.dispose();
  }, 60_000);
});
