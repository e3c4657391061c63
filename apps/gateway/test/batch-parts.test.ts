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
async function publishChunk(from: number, to: number): Promise<string[]> {
  const shards: number[] = [];
  const envelopes: Buffer[] = [];
  const offsets: string[] = [];
  for (let i = from; i <= to; i++) {
    const listingId = `lst-${i % 7}`;
    const payload = JSON.stringify({ event_id: `p-${i}`, event_type: 'ListingUpdated', listing_id: listingId, occurred_at: 'now' });
    shards.push(shardOf(listingId, 16));
    envelopes.push(Buffer.from(encodeEnvelope({ topic: t.topic, partition: PARTITION, offset: String(i), key: listingId, ts: Date.now() }, payload)));
    offsets.push(String(i));
  }
  const parts = encodeEnvelopeBatch(PARTITION, offsets, shards, envelopes);
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
});
