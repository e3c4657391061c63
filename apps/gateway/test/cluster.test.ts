// The gateway over a real Redis Cluster (3 primaries + 3 replicas): sharded pub/sub per partition's
// hash tag, and the two topology faults of the gateway's side — a slot moved and a primary SIGKILLed
// mid-stream — each with every event delivered exactly once to filtered and unfiltered clients.
// The publisher writes as ingest does in cluster mode (one pipeline per partition's slot: XADD,
// WAIT for a replica, SPUBLISH; redone whole when it fails), so the gateway side is tested alone,
// in ingest's batch forms (decision 0012): a chunk is one history entry and one part per key shard.
import { setTimeout as sleep } from 'node:timers/promises';
import { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisLayout, encodeEnvelope, encodeEnvelopeBatch, HISTORY_ALREADY_STORED, historyBatchArgs, partitionHashTag, RAISE_PARTITION_COUNT_SCRIPT, shardOf, type RedisLayout } from '@wirestream/wire';
import { createLogger, createMemorySink } from '@wirestream/telemetry';
import { startRedisCluster, uniqueName, waitFor, type RedisCluster } from '@wirestream/testkit';
import { connectRedis, createGateway, type Gateway, type RedisConnections } from '../src/index.js';
import { collect, schemaFor, type ExecutionResult } from './support/gateway.js';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';

const PARTITIONS = 3;
const SHARDS = 16; // the example schema's listingUpdated @topic(shards:)
const LISTINGS = Array.from({ length: 12 }, (_, i) => `lst-${String(i).padStart(4, '0')}`);
const WATCHED = LISTINGS[5] as string;

interface Sent {
  readonly partition: number;
  readonly offset: string;
  readonly listing: string;
}

/** Writes events as ingest does in cluster mode and remembers each one it wrote. */
function createClusterPublisher(cluster: Cluster, layout: RedisLayout, topic: string) {
  const next = new Array<number>(PARTITIONS).fill(0);
  const sent: Sent[] = [];
  let seq = 0;
  let failedAttempts = 0;

  /** One chunk of consecutive offsets from `first`, one event per listing. */
  async function publishOnce(partition: number, first: number, listings: readonly string[]): Promise<void> {
    const offsets = listings.map((_, i) => String(first + i));
    const shards = listings.map((listing) => shardOf(listing, SHARDS));
    const envelopes = listings.map((listing, i) => {
      const offset = offsets[i] as string;
      const payload = JSON.stringify({ event_id: `e-${partition}-${offset}`, event_type: 'ListingUpdated', listing_id: listing, occurred_at: 'now' });
      return Buffer.from(encodeEnvelope({ topic, partition, offset, key: listing, ts: Date.now() }, payload));
    });
    const parts = encodeEnvelopeBatch(partition, offsets, shards, envelopes);
    const stored = parts.map((p) => ({ channel: layout.channel(topic, p.shard), bytes: p.bytes }));
    const pipeline = cluster
      .pipeline()
      .call('xadd', historyBatchArgs(layout.streamKey(topic, partition), offsets.at(-1) as string, stored))
      .call('wait', '1', '50'); // short: after the failover the promoted primary has no replica to wait for
    for (const { shard, bytes } of parts) pipeline.spublish(layout.wireChannel(topic, partition, shard), bytes);
    const results = await pipeline.exec();
    for (const [err] of results ?? []) {
      if (!err || err.message.includes(HISTORY_ALREADY_STORED)) continue;
      // ioredis redirects a pipeline only when every command failed alike; with WAIT's success in it
      // a MOVED comes back as a result, and the slot map must be refreshed before the redo.
      if (/^(MOVED|ASK) /.test(err.message)) cluster.refreshSlotsCache();
      throw err;
    }
  }

  /** One event on the next partition (round robin), redone until Redis took all of it. */
  async function publishNext(): Promise<void> {
    await publishAt(seq % PARTITIONS);
  }

  /** A chunk of `size` events on `partition` (one by default), each on the next listing. */
  async function publishAt(partition: number, size = 1): Promise<void> {
    const listings = Array.from({ length: size }, () => LISTINGS[seq++ % LISTINGS.length] as string);
    const first = next[partition] ?? 0;
    next[partition] = first + size;
    for (;;) {
      try {
        await publishOnce(partition, first, listings);
        break;
      } catch (err) {
        if (process.env['WIRESTREAM_DEBUG'] && failedAttempts % 50 === 0) console.info(`publish failed: ${String(err)}`);
        failedAttempts++;
        await sleep(50);
      }
    }
    listings.forEach((listing, i) => sent.push({ partition, offset: String(first + i), listing }));
  }

  return { sent, publishNext, publishAt, failedAttempts: () => failedAttempts };
}

/** Publishes `count` events at about `perSecond`. */
async function stream(publisher: ReturnType<typeof createClusterPublisher>, count: number, perSecond: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    await publisher.publishNext();
    await sleep(1_000 / perSecond);
  }
}

function positionsOf(results: readonly ExecutionResult[]): string[] {
  return results.map((r) => {
    const position = (r.extensions as { position: { partition: number; offset: string } }).position;
    return `${position.partition}:${position.offset}`;
  });
}

/** Missing and duplicated positions of one client against what it should have received. */
function tally(received: readonly string[], expected: readonly Sent[]): { missing: string[]; duplicates: number } {
  const seen = new Map<string, number>();
  for (const p of received) seen.set(p, (seen.get(p) ?? 0) + 1);
  const missing = expected.map((s) => `${s.partition}:${s.offset}`).filter((p) => !seen.has(p));
  let duplicates = 0;
  for (const n of seen.values()) duplicates += n - 1;
  return { missing, duplicates };
}

describe('gateway on Redis Cluster (sharded pub/sub)', () => {
  let cluster: RedisCluster;
  let publisherClient: Cluster;
  let redis: RedisConnections;
  let gateway: Gateway;
  let url: string;
  const clients: Client[] = [];
  const topic = uniqueName('listing-events');
  const sink = createMemorySink();
  let layout: RedisLayout;
  let publisher: ReturnType<typeof createClusterPublisher>;

  beforeAll(async () => {
    cluster = await startRedisCluster();
    layout = createRedisLayout('cluster', 'ws', 'wsh');
    publisherClient = new Cluster([...cluster.startupNodes], { redisOptions: { maxRetriesPerRequest: 0 } });
    publisherClient.on('error', () => {}); // failures surface through the pipelines, which are redone
    await publisherClient.eval(RAISE_PARTITION_COUNT_SCRIPT, 1, layout.partitionCountKey(topic), String(PARTITIONS));
    for (let p = 0; p < PARTITIONS; p++) await publisherClient.sadd(layout.partitionsKey(topic), String(p));
    publisher = createClusterPublisher(publisherClient, layout, topic);
    const seed = cluster.startupNodes[0] as { host: string; port: number };
    const logger = createLogger({ name: 'gateway-cluster-test', destination: sink });
    redis = connectRedis({ mode: 'cluster', url: `redis://${seed.host}:${seed.port}`, channelPrefix: 'ws', historyPrefix: 'wsh', historyEnabled: true, partitionsPollMs: 500, logger });
    gateway = createGateway({ schema: schemaFor(topic), broker: redis.broker, ...(redis.history ? { history: redis.history } : {}), logger }, {});
    const port = await gateway.listen(0, '127.0.0.1');
    url = `ws://127.0.0.1:${port}/graphql`;
    await waitFor(() => gateway.isReady(), { timeoutMs: 20_000, message: 'gateway ready on the cluster' });
  });

  afterAll(async () => {
    if (process.env['WIRESTREAM_DEBUG']) console.info(sink.lines.filter((l) => !JSON.stringify(l).includes('SSUBSCRIBE on')).slice(-40).map((l) => JSON.stringify(l).slice(0, 400)).join('\n'));
    await Promise.all(clients.map((c) => Promise.resolve(c.dispose())));
    await gateway?.drain();
    redis?.close();
    publisherClient?.disconnect();
    await cluster?.stop();
  });

  function connect(): Client {
    const client = createClient({ url, webSocketImpl: WebSocket, retryAttempts: 0, lazy: true });
    clients.push(client);
    return client;
  }

  /** Subscribes an unfiltered and a key-filtered client and waits until both receive live events. */
  async function subscribePair() {
    const all = collect(connect(), 'subscription { listingUpdated { listing_id } }');
    const one = collect(connect(), `subscription { listingUpdated(listing_id: "${WATCHED}") { listing_id } }`);
    // Every wire channel confirmed: one SSUBSCRIBE per partition for the filtered client, 16 shards x 3 partitions for the other.
    await waitFor(
      () => {
        const stats = gateway.stats();
        return stats.subscriptions === 2 && stats.channels === SHARDS && stats.confirmedChannels === SHARDS && redis.broker.isReady();
      },
      { timeoutMs: 20_000, message: 'both subscriptions live, every channel confirmed' },
    );
    const from = publisher.sent.length;
    return { all, one, from };
  }

  function assertExactlyOnce(pair: Awaited<ReturnType<typeof subscribePair>>, what: string): void {
    const expectedAll = publisher.sent.slice(pair.from);
    const expectedOne = expectedAll.filter((s) => s.listing === WATCHED);
    // What arrived before the pair subscribed (published earlier) is not counted.
    const before = new Set(publisher.sent.slice(0, pair.from).map((s) => `${s.partition}:${s.offset}`));
    const all = tally(positionsOf(pair.all.results).filter((p) => !before.has(p)), expectedAll);
    const one = tally(positionsOf(pair.one.results).filter((p) => !before.has(p)), expectedOne);
    console.info(`${what}: unfiltered expected ${expectedAll.length}, missing ${all.missing.length}, duplicates ${all.duplicates}; filtered expected ${expectedOne.length}, missing ${one.missing.length}, duplicates ${one.duplicates}; publish retries ${publisher.failedAttempts()}`);
    expect({ what, missing: all.missing, duplicates: all.duplicates }).toEqual({ what, missing: [], duplicates: 0 });
    expect({ what, missing: one.missing, duplicates: one.duplicates }).toEqual({ what, missing: [], duplicates: 0 });
    expect(pair.all.errors).toEqual([]);
    expect(pair.one.errors).toEqual([]);
  }

  /** Ends a pair and waits until the gateway let go of its channels (the next pair starts from scratch). */
  async function release(pair: Awaited<ReturnType<typeof subscribePair>>): Promise<void> {
    pair.all.dispose();
    pair.one.dispose();
    await waitFor(() => gateway.stats().subscriptions === 0 && gateway.stats().channels === 0, { message: 'pair released' });
  }

  it('delivers each partition over its slot, to filtered and unfiltered clients, exactly once', async () => {
    const pair = await subscribePair();
    await stream(publisher, 150, 300);
    await waitFor(() => positionsOf(pair.all.results).length >= 150, { timeoutMs: 10_000, message: 'unfiltered client received the stream' });
    await sleep(200);
    assertExactlyOnce(pair, 'steady');
    await release(pair);
  });

  it('re-assembles chunks of several shards per partition: each partition in offset order, exactly once', async () => {
    const pair = await subscribePair();
    for (let i = 0; i < 12; i++) await publisher.publishAt(i % PARTITIONS, 7);
    const expected = publisher.sent.slice(pair.from);
    await waitFor(() => positionsOf(pair.all.results).length >= expected.length, { timeoutMs: 10_000, message: 'unfiltered client received the chunks' });
    await sleep(200);
    assertExactlyOnce(pair, 'chunks of 7');
    for (let p = 0; p < PARTITIONS; p++) {
      const got = positionsOf(pair.all.results).filter((x) => x.startsWith(`${p}:`));
      expect(got, `partition ${p} in offset order`).toEqual(expected.filter((s) => s.partition === p).map((s) => `${p}:${s.offset}`));
    }
    await release(pair);
  });

  it('resumes a client from its per-partition positions with exactly what it missed (history read per slot)', async () => {
    const first = collect(connect(), 'subscription { listingUpdated { listing_id } }');
    await waitFor(() => gateway.stats().subscriptions === 1 && gateway.stats().confirmedChannels === SHARDS, { message: 'first subscription live' });
    const start = publisher.sent.length;
    await stream(publisher, 30, 300);
    await waitFor(() => first.results.length === 30, { message: 'first 30 events' });
    const last = new Map<number, string>();
    let epoch: string | undefined;
    for (const r of first.results) {
      const position = (r.extensions as { position: { partition: number; offset: string; epoch: string } }).position;
      last.set(position.partition, position.offset);
      epoch = position.epoch;
    }
    first.dispose();
    await waitFor(() => gateway.stats().subscriptions === 0 && gateway.stats().channels === 0, { message: 'first subscription gone' });
    const missedFrom = publisher.sent.length;
    await stream(publisher, 21, 300); // nobody listens: only history has these
    expect(publisher.sent.length - start).toBe(51);
    const resumed = collect(connect(), 'subscription { listingUpdated { listing_id } }', undefined, {
      resume: { epoch, positions: Object.fromEntries([...last].map(([p, o]) => [String(p), o])) },
    });
    await waitFor(() => resumed.results.length >= 22, { message: 'recovery signal + 21 missed events' });
    const recovery = (resumed.results[0]?.extensions as { recovery?: { recovered: boolean } } | undefined)?.recovery;
    expect(recovery?.recovered).toBe(true);
    const missed = publisher.sent.slice(missedFrom).map((e) => `${e.partition}:${e.offset}`);
    expect(positionsOf(resumed.results.slice(1)).sort()).toEqual([...missed].sort());
    resumed.dispose();
    await waitFor(() => gateway.stats().subscriptions === 0 && gateway.stats().channels === 0, { message: 'resumed subscription gone' });
  });

  it('subscribes the partitions a topic gains, and back-fills what they carried before the gateway knew them', async () => {
    const client = collect(connect(), 'subscription { listingUpdated { listing_id } }');
    await waitFor(() => gateway.stats().subscriptions === 1 && gateway.stats().confirmedChannels === SHARDS, { message: 'subscription live' });
    const from = publisher.sent.length;
    // Ingest's order for a new partition: its entry in the partitions set and the raised count, then its events.
    await publisherClient.sadd(layout.partitionsKey(topic), '3');
    await publisher.publishAt(3); // before the gateway polled the new count: only history has it
    await publisherClient.eval(RAISE_PARTITION_COUNT_SCRIPT, 1, layout.partitionCountKey(topic), String(PARTITIONS + 1));
    await waitFor(() => positionsOf(client.results).includes(`3:0`), { timeoutMs: 10_000, message: 'the new partition back-filled' });
    for (let i = 0; i < 4; i++) await publisher.publishAt(3);
    await stream(publisher, 6, 300);
    const expected = publisher.sent.slice(from);
    await waitFor(() => client.results.length >= expected.length, { message: 'every event of the old and the new partitions' });
    await sleep(200);
    expect(tally(positionsOf(client.results), expected)).toEqual({ missing: [], duplicates: 0 });
    client.dispose();
    await waitFor(() => gateway.stats().subscriptions === 0 && gateway.stats().channels === 0, { message: 'subscription gone' });
  });

  it('follows a slot migrated mid-stream (the partition moves to another primary) with no gap', async () => {
    const pair = await subscribePair();
    const tag = partitionHashTag(topic, 1);
    const from = await cluster.ownerOf(tag);
    const to = cluster.nodes.find((n) => n.role === 'primary' && n.pid !== undefined && n.port !== from.port);
    if (!to) throw new Error('no other primary');
    const streaming = stream(publisher, 400, 200);
    const progress = process.env['WIRESTREAM_DEBUG'] ? setInterval(() => console.info(`sent ${publisher.sent.length} failed ${publisher.failedAttempts()} received ${pair.all.results.length}`), 1000) : undefined;
    await sleep(600);
    const migration = await cluster.migrateSlot(cluster.slotOf(tag), to.port);
    console.info(`slot ${migration.slot} of ${tag}: ${migration.from.port} → ${migration.to.port}, ${migration.keysMoved} keys, ${migration.migrationMs} ms`);
    await streaming;
    clearInterval(progress);
    await waitFor(() => tally(positionsOf(pair.all.results), publisher.sent.slice(pair.from)).missing.length === 0, {
      timeoutMs: 15_000,
      message: 'unfiltered client caught up after the migration',
    }).catch(() => undefined);
    await sleep(300);
    assertExactlyOnce(pair, 'slot migrated');
    await release(pair);
  });

  it('recovers from a primary SIGKILLed mid-stream (its replica promoted) with no gap', async () => {
    const pair = await subscribePair();
    const streaming = stream(publisher, 300, 200);
    const progress = process.env['WIRESTREAM_DEBUG'] ? setInterval(() => console.info(`sent ${publisher.sent.length} failed ${publisher.failedAttempts()} received ${pair.all.results.length} broker ${redis.broker.status()}`), 1000) : undefined;
    await sleep(600);
    const failover = await cluster.killPrimary({ key: partitionHashTag(topic, 2) });
    console.info(`killed ${failover.killed.port}, promoted ${failover.promoted.port} after ${failover.failoverMs} ms`);
    await streaming;
    clearInterval(progress);
    await waitFor(() => tally(positionsOf(pair.all.results), publisher.sent.slice(pair.from)).missing.length === 0, {
      timeoutMs: 20_000,
      message: 'unfiltered client caught up after the failover',
    }).catch(() => undefined);
    await sleep(300);
    assertExactlyOnce(pair, 'primary killed');
    expect(redis.broker.isReady()).toBe(true);
    await release(pair);
  }, 90_000);
});
