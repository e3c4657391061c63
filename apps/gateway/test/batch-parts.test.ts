// Ingest's live batch form (decision 0012): one message per key shard per chunk. The broker
// re-assembles a chunk from its parts, so clients still see each partition in offset order, and
// duplicate marks and resume positions work per event as with one message per event.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { channelName, encodeEnvelope, encodeEnvelopeBatch, shardOf } from '@wirestream/wire';
import { waitFor } from '@wirestream/testkit';
import { collect, startTestGateway, type ExecutionResult, type TestGateway } from './support/gateway.js';

const UNFILTERED = 'subscription { listingUpdated { listing_id event_id } }';
const PARTITION = 1;

let t: TestGateway;
let publisher: Redis;
beforeAll(async () => {
  t = await startTestGateway();
  publisher = new Redis(t.redisServer.url);
});
afterAll(async () => {
  publisher?.disconnect();
  await t?.stop();
});
afterEach(async () => {
  await waitFor(() => t.gateway.stats().subscriptions === 0, { message: 'no subscription left over' });
});

interface Position {
  partition: number;
  offset: string;
}
const offsetsOf = (results: readonly ExecutionResult[]): string[] =>
  results.flatMap((r) => {
    const position = (r.extensions as { position?: Position } | undefined)?.position;
    return position?.partition === PARTITION ? [position.offset] : [];
  });

/** Publishes offsets [from, to] of partition 1 as ingest's batch form does: one part per shard, ascending shards (so offsets interleave across parts). */
async function publishChunk(from: number, to: number, routed = false, listings = 7): Promise<string[]> {
  const shards: number[] = [];
  const envelopes: Buffer[] = [];
  const offsets: string[] = [];
  for (let i = from; i <= to; i++) {
    const listingId = `lst-${i % listings}`;
    const payload = JSON.stringify({ event_id: `p-${i}`, event_type: 'ListingUpdated', listing_id: listingId, occurred_at: 'now' });
    shards.push(shardOf(listingId, 16));
    envelopes.push(Buffer.from(encodeEnvelope({ topic: t.topic, partition: PARTITION, offset: String(i), key: listingId, ts: Date.now() }, payload)));
    offsets.push(String(i));
  }
  const routing = routed ? { on: 'listing_id', keys: offsets.map((o) => `lst-${Number(o) % listings}`) } : undefined;
  const parts = encodeEnvelopeBatch(PARTITION, offsets, shards, envelopes, undefined, routing);
  expect(parts.length).toBeGreaterThan(1);
  const pipeline = publisher.pipeline();
  for (const { shard, bytes } of parts) pipeline.publish(channelName('ws', t.topic, shard), bytes);
  await pipeline.exec();
  return offsets;
}

async function subscribed(count: number): Promise<void> {
  await waitFor(() => t.gateway.stats().subscriptions === count && t.gateway.stats().confirmedChannels === 16, { message: `${count} subscription(s) live` });
}

describe('batch parts', () => {
  it('reach an unfiltered client in offset order, every event once; a re-published chunk is dropped by position', async () => {
    const all = collect(t.connect(), UNFILTERED);
    const one = collect(t.connect(), 'subscription { listingUpdated(listing_id: "lst-3") { listing_id event_id } }');
    await subscribed(2);
    const first = await publishChunk(0, 29);
    const second = await publishChunk(30, 44);
    await waitFor(() => offsetsOf(all.results).length === 45, { message: 'all 45 events' });
    expect(offsetsOf(all.results)).toEqual([...first, ...second]);
    await waitFor(() => offsetsOf(one.results).length === first.concat(second).filter((o) => Number(o) % 7 === 3).length, { message: 'the events of lst-3' });
    expect(offsetsOf(one.results)).toEqual([...first, ...second].filter((o) => Number(o) % 7 === 3));

    // Ingest redoing the first chunk after a crash: nothing reaches the clients twice.
    const duplicatesBefore = t.gateway.stats().duplicates;
    await publishChunk(0, 29);
    await waitFor(() => t.gateway.stats().duplicates >= duplicatesBefore + 30, { message: 'the redo dropped' });
    const next = await publishChunk(45, 50);
    await waitFor(() => offsetsOf(all.results).length === 51, { message: 'the next chunk' });
    expect(offsetsOf(all.results)).toEqual([...first, ...second, ...next]);
    all.dispose();
    one.dispose();
  });
  it('with routing keys (decision 0039): events no subscription here pins are dropped unparsed and marked; the pinned ones arrive in order, once', async () => {
    const three = collect(t.connect(), 'subscription { listingUpdated(listing_id: "lst-3") { listing_id event_id } }');
    const five = collect(t.connect(), 'subscription { listingUpdated(where: { listing_id: { in: ["lst-5"] } }) { listing_id event_id } }');
    // Each listens only on its key's shard, which other listings share (40 listings on 16 shards).
    const shards = new Set([shardOf('lst-3', 16), shardOf('lst-5', 16)]);
    await waitFor(() => t.gateway.stats().subscriptions === 2 && t.gateway.stats().confirmedChannels === shards.size, { message: '2 pinned subscriptions live' });
    const before = t.gateway.stats();
    const publish = async (from: number, to: number): Promise<string[]> => publishChunk(from, to, true, 40);
    const offsets = [...(await publish(1000, 1034)), ...(await publish(1035, 1048))];
    const listing = (o: string): string => `lst-${Number(o) % 40}`;
    const of = (key: string): string[] => offsets.filter((o) => listing(o) === key);
    const onShards = (list: readonly string[]): string[] => list.filter((o) => shards.has(shardOf(listing(o), 16)));
    await waitFor(() => offsetsOf(three.results).length === of('lst-3').length && offsetsOf(five.results).length === of('lst-5').length, { message: 'the events of lst-3 and lst-5' });
    expect(offsetsOf(three.results)).toEqual(of('lst-3'));
    expect(offsetsOf(five.results)).toEqual(of('lst-5'));
    await waitFor(() => t.gateway.stats().eventsIn - before.eventsIn === onShards(offsets).length, { message: 'every event of the two channels in' });
    const after = t.gateway.stats();
    // The events of the other listings on those channels: dropped before parsing.
    const unwanted = onShards(offsets).length - of('lst-3').length - of('lst-5').length;
    expect(unwanted).toBeGreaterThan(0);
    expect(after.unwanted - before.unwanted).toBe(unwanted);
    expect(after.badEnvelopes).toBe(before.badEnvelopes);
    // Their positions were marked: the same chunk again is all duplicates, nothing reaches anyone.
    const redo = onShards(await publish(1000, 1034));
    await waitFor(() => t.gateway.stats().duplicates - after.duplicates === redo.length, { message: 'the redo dropped by position' });
    expect(t.gateway.stats().unwanted).toBe(after.unwanted);
    // With an unpinned subscription on the channels, nothing is dropped unparsed any more.
    const all = collect(t.connect(), UNFILTERED);
    await subscribed(3);
    const more = await publish(1049, 1062);
    await waitFor(() => offsetsOf(all.results).length === more.length, { message: 'every event to the unfiltered one' });
    expect(t.gateway.stats().unwanted).toBe(after.unwanted);
    for (const c of [three, five, all]) c.dispose();
  });
});
