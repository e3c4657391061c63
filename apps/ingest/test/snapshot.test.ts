// Integration: `@topic(snapshot: true)` against the run's real Kafka broker (../global-setup.ts), a
// real redis-server (standalone) and a real Redis Cluster (3 primaries, no replicas: one for the
// cluster test). Ingest runs in-process; the snapshot is read with readSnapshot, as the gateway will.
import { Kafka, logLevel, type Message } from 'kafkajs';
import { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { createWirestreamSchema } from '@wirestream/schema';
import {
  createEnvelopeBatchAssembler,
  createRedisLayout,
  decodeEnvelope,
  historyEntryId,
  NOT_STORED_YET,
  readSnapshot,
  SNAPSHOT_APPLY_SCRIPT,
  SNAPSHOT_TOP_SUFFIX,
  type Envelope,
  type RedisLayout,
  type Snapshot,
  type SnapshotRedis,
} from '@wirestream/wire';
import { createLogger, createMemorySink } from '@wirestream/telemetry';
import { createTopics, startRedisCluster, uniqueName, waitFor, type RedisCluster } from '@wirestream/testkit';
import { createEventConverter, createIngest, createIngestRedis, DEAD_LETTER_HEADERS, kafkaLogCreator, type EventConverter, type Ingest, type IngestOptions, type IngestRedis } from '../src/index.js';
import { useKafkaRedis } from './support/kafka-redis.js';

const servers = useKafkaRedis('snapshot-test');

const PARTITIONS = 3;
const SHARDS = 4;
const CHANNEL_PREFIX = 'ws';
const ARRIVAL_TIMEOUT_MS = 25_000; // 25 seconds: includes the first group join of a test

const sdl = (topic: string, snapshot: boolean) => `type Price { listing_id: ID! price_cents: Int! seq: Int! }
type Subscription {
  priceChanged(listing_id: ID): Price @topic(name: ${JSON.stringify(topic)}, key: "listing_id", shards: ${SHARDS}, snapshot: ${String(snapshot)})
}`;

/** A price message as a producer writes it (camelCase JSON, keyed by the listing); a null price is a tombstone. */
function price(listing: string, seq: number | null): Message {
  return { key: listing, value: seq === null ? null : JSON.stringify({ listingId: listing, priceCents: 1_000 + seq, seq }) };
}

interface Pipeline {
  readonly topic: string;
  readonly groupId: string;
  readonly layout: RedisLayout;
  /** Live envelopes in arrival order (batch parts re-assembled, as the gateway does). */
  readonly received: Envelope[];
  readonly reader: SnapshotRedis & { xrevrange(key: string, end: string, start: string, count: 'COUNT', n: number): Promise<[string, string[]][]> };
  startIngest(overrides?: IngestOptions, convert?: EventConverter): Promise<Ingest>;
  stopIngest(ingest: Ingest): Promise<void>;
  produce(messages: Message[]): Promise<void>;
}

/** A unique snapshot topic (3 partitions) and group, a live subscriber, a reader; everything closed when the test ends. */
async function createPipeline(mode: 'standalone' | 'cluster', cluster?: RedisCluster): Promise<Pipeline> {
  const suffix = uniqueName('snapshot-test');
  const topic = `prices-${suffix}`;
  const groupId = `group-${suffix}`;
  const historyPrefix = `wsh-${suffix}`;
  const layout = createRedisLayout(mode, CHANNEL_PREFIX, historyPrefix);
  const logger = createLogger({ name: 'snapshot-test', destination: createMemorySink() });
  const schema = createWirestreamSchema(sdl(topic, true));
  await createTopics(servers.admin, [{ topic, numPartitions: PARTITIONS }]);
  const kafka = new Kafka({ clientId: 'snapshot-test', brokers: servers.brokers, logLevel: logLevel.ERROR, logCreator: kafkaLogCreator(logger) });
  const seed = cluster?.startupNodes[0];
  const url = seed === undefined ? servers.redisServer.url : `redis://${seed.host}:${seed.port}`;
  const redis: IngestRedis = createIngestRedis({ mode, url, logger, connectionName: 'snapshot-test' });
  const received: Envelope[] = [];
  const assembler = createEnvelopeBatchAssembler({
    emit: (_channel, text) => received.push(decodeEnvelope(text)),
    listens: () => true,
    onMalformed: (channel, _text, err) => {
      throw new Error(`a malformed batch part on ${channel}`, { cause: err });
    },
  });
  let reader: Redis | Cluster;
  let subscriber: Redis | Cluster;
  if (cluster === undefined) {
    reader = new Redis(servers.redisServer.url);
    const plain = new Redis(servers.redisServer.url);
    plain.on('pmessage', (_pattern: string, channel: string, text: string) => assembler.message(channel, channel, text));
    await plain.psubscribe(`${CHANNEL_PREFIX}:${topic}:*`);
    subscriber = plain;
  } else {
    reader = new Cluster([...cluster.startupNodes]);
    const sharded = new Cluster([...cluster.startupNodes], { shardedSubscribers: true });
    sharded.on('smessage', (channel: string, text: string) => assembler.message(channel, channel, text));
    for (let partition = 0; partition < PARTITIONS; partition++) {
      await sharded.ssubscribe(...Array.from({ length: SHARDS }, (_, shard) => layout.wireChannel(topic, partition, shard)));
    }
    subscriber = sharded;
  }
  reader.on('error', () => {});
  subscriber.on('error', () => {});
  const ingests: Ingest[] = [];
  onTestFinished(async () => {
    for (const ingest of ingests.reverse()) await ingest.stop();
    redis.disconnect();
    reader.disconnect();
    subscriber.disconnect();
  });
  return {
    topic,
    groupId,
    layout,
    received,
    reader,
    async startIngest(overrides: IngestOptions = {}, convert?: EventConverter): Promise<Ingest> {
      const ingest = createIngest({ kafka, redis, schema, logger, ...(convert === undefined ? {} : { convert }) }, { groupId, channelPrefix: CHANNEL_PREFIX, historyPrefix, redisMode: mode, fromBeginning: true, ...overrides });
      ingests.push(ingest);
      await ingest.start();
      return ingest;
    },
    async stopIngest(ingest: Ingest): Promise<void> {
      ingests.splice(ingests.indexOf(ingest), 1);
      await ingest.stop();
    },
    async produce(messages: Message[]): Promise<void> {
      await servers.producer.send({ topic, acks: -1, messages });
    },
  };
}

/** Each key's value in the snapshot: its `seq`, from the stored envelope. */
function seqs(snapshot: Snapshot): Map<string, number> {
  return new Map(snapshot.entries.map((e) => [e.key, decodeEnvelope(e.envelope).payload['seq'] as number]));
}

/** The topic's log end offset per partition. */
async function highWatermarks(topic: string): Promise<Map<number, bigint>> {
  return new Map((await servers.admin.fetchTopicOffsets(topic)).map((p) => [p.partition, BigInt(p.high)]));
}

/** Waits until every partition's snapshot reflects its log end (offset high - 1). */
async function waitForSnapshotAtEnd(pipeline: Pipeline): Promise<Snapshot> {
  const ends = await highWatermarks(pipeline.topic);
  return waitFor(
    async () => {
      const snapshot = await readSnapshot(pipeline.reader, pipeline.layout, pipeline.topic, 'all', 10_000);
      for (const [partition, high] of ends) {
        if (high === 0n) continue;
        if (snapshot.positions.get(partition) !== String(high - 1n)) return false;
      }
      return snapshot;
    },
    { timeoutMs: ARRIVAL_TIMEOUT_MS, message: 'the snapshot to reach the end of every partition' },
  );
}

/**
 * Publishes `rounds` values for each of `keys` listings from three concurrent producers (each owns
 * a third of the keys, so a key's order is its producer's send order), reading the snapshot while
 * they run: every read must be a state the stream already holds (each partition's snapshot top is
 * in its history stream), and no key may go back. Answers the final seq per key.
 */
async function publishConcurrently(pipeline: Pipeline, keys: number, rounds: number): Promise<Map<string, number>> {
  const expected = new Map<string, number>();
  const producers = [0, 1, 2].map(async (owner) => {
    for (let round = 0; round < rounds; round++) {
      const messages: Message[] = [];
      for (let k = owner; k < keys; k += 3) {
        const seq = round * keys + k;
        messages.push(price(`listing-${k}`, seq));
        expected.set(`listing-${k}`, seq);
      }
      await pipeline.produce(messages);
    }
  });
  let producing = true;
  const highest = new Map<string, number>();
  let reads = 0;
  const watcher = (async () => {
    while (producing) {
      const snapshot = await readSnapshot(pipeline.reader, pipeline.layout, pipeline.topic, 'all', 10_000);
      reads++;
      for (const [key, seq] of seqs(snapshot)) {
        expect(seq, `${key} went back`).toBeGreaterThanOrEqual(highest.get(key) ?? -1);
        highest.set(key, seq);
      }
      for (const [partition, top] of snapshot.positions) {
        if (top === undefined) continue;
        const held = await pipeline.reader.xrevrange(pipeline.layout.streamKey(pipeline.topic, partition), '+', historyEntryId(top), 'COUNT', 1);
        expect(held.length, `history of partition ${partition} holds the snapshot's top ${top}`).toBe(1);
      }
    }
  })();
  try {
    await Promise.all(producers);
    await waitForSnapshotAtEnd(pipeline);
  } finally {
    producing = false;
    await watcher;
  }
  expect(reads).toBeGreaterThan(0);
  return expected;
}

describe('snapshot (standalone Redis)', () => {
  it('holds the latest envelope per key under concurrent publishing, byte for byte what went out live, never ahead of history', async () => {
    const pipeline = await createPipeline('standalone');
    await pipeline.startIngest();
    const expected = await publishConcurrently(pipeline, 30, 20);
    const snapshot = await waitForSnapshotAtEnd(pipeline);
    expect(seqs(snapshot)).toEqual(expected);
    expect(snapshot.truncated).toBe(false);
    // Each entry is the last live envelope of its key, with its position.
    await waitFor(() => pipeline.received.length === 30 * 20, { timeoutMs: ARRIVAL_TIMEOUT_MS, message: 'every live event' });
    const lastLive = new Map(pipeline.received.map((e) => [e.payload['listing_id'] as string, e]));
    for (const entry of snapshot.entries) {
      const live = lastLive.get(entry.key);
      expect(decodeEnvelope(entry.envelope)).toEqual(live);
      expect([entry.partition, entry.offset]).toEqual([live?.partition, live?.offset]);
    }
    // Asked by key (one unknown), and the whole topic under a cap.
    const some = await readSnapshot(pipeline.reader, pipeline.layout, pipeline.topic, ['listing-3', 'listing-17', 'nope'], 10);
    expect(seqs(some)).toEqual(new Map([['listing-3', expected.get('listing-3')], ['listing-17', expected.get('listing-17')]]));
    const capped = await readSnapshot(pipeline.reader, pipeline.layout, pipeline.topic, 'all', 7);
    expect([capped.entries.length, capped.truncated]).toEqual([7, true]);
    for (const [key, seq] of seqs(capped)) expect(seq).toBe(expected.get(key));
    await expect(readSnapshot(pipeline.reader, pipeline.layout, pipeline.topic, ['a', 'b', 'c'], 2)).rejects.toThrow(/3 keys asked for, over the cap of 2/);
  });

  it('a tombstone deletes its key and is published as a deleted event; a redelivery of older offsets moves nothing back', async () => {
    const pipeline = await createPipeline('standalone');
    let ingest = await pipeline.startIngest();
    await pipeline.produce([price('a', 1), price('b', 2), price('a', 3), price('b', 4), price('c', 5)]);
    await pipeline.produce([price('a', null), price('c', 6)]);
    const before = await waitForSnapshotAtEnd(pipeline);
    expect(seqs(before)).toEqual(new Map([['b', 4], ['c', 6]]));
    const deleted = await waitFor(() => pipeline.received.find((e) => e.deleted === true), { timeoutMs: ARRIVAL_TIMEOUT_MS, message: 'the deleted event' });
    expect(deleted).toMatchObject({ v: 1, topic: pipeline.topic, key: 'a', deleted: true, payload: { listing_id: 'a' } });
    // Delivered in its place in the stream: after a's last put.
    const forA = pipeline.received.filter((e) => e.key === 'a').map((e) => (e.deleted === true ? 'deleted' : e.payload['seq']));
    expect(forA).toEqual([1, 3, 'deleted']);

    // At least once: the group's offsets go back to the start and the old puts are published again,
    // one per chunk, and only those (the converter refuses the newer values, so the redelivery ends
    // on old ones): a snapshot that took them would now hold a:1 or b:2.
    await pipeline.stopIngest(ingest);
    await servers.admin.resetOffsets({ groupId: pipeline.groupId, topic: pipeline.topic, earliest: true });
    const liveBefore = pipeline.received.length;
    const convert = createEventConverter();
    const oldOnly: EventConverter = (value, head, routeField) => {
      const seq = value === null ? undefined : (JSON.parse(value.toString()) as { seq: number }).seq;
      return seq !== undefined && seq > 2 ? { ok: false, reason: { code: 'INVALID_JSON', message: 'refused by the test: redeliver only the old puts' } } : convert(value, head, routeField);
    };
    ingest = await pipeline.startIngest({ publishChunkSize: 1 }, oldOnly);
    const reads: Map<string, number>[] = [];
    await waitFor(
      async () => {
        reads.push(seqs(await readSnapshot(pipeline.reader, pipeline.layout, pipeline.topic, 'all', 100)));
        // a:1, b:2 and a's tombstone again.
        return pipeline.received.length >= liveBefore + 3;
      },
      { timeoutMs: ARRIVAL_TIMEOUT_MS, intervalMs: 5, message: 'the redelivery to be published' },
    );
    expect(pipeline.received.slice(liveBefore).map((e) => `${String(e.key)}:${e.deleted === true ? 'deleted' : String(e.payload['seq'])}`).sort()).toEqual(['a:1', 'a:deleted', 'b:2']);
    // Every read during and after the redelivery saw the final state: no older value, no resurrected key.
    for (const read of reads) expect(read).toEqual(new Map([['b', 4], ['c', 6]]));
    expect(seqs(await waitForSnapshotAtEnd(pipeline))).toEqual(new Map([['b', 4], ['c', 6]]));
    await pipeline.stopIngest(ingest);
    ingest = await pipeline.startIngest();
    // Then a new put brings a deleted key back.
    await pipeline.produce([price('a', 7)]);
    expect(seqs(await waitForSnapshotAtEnd(pipeline))).toEqual(new Map([['a', 7], ['b', 4], ['c', 6]]));
  });

  it('keeps the snapshot without history (INGEST_HISTORY_LENGTH=0)', async () => {
    const pipeline = await createPipeline('standalone');
    await pipeline.startIngest({ historyLength: 0 });
    await pipeline.produce([price('a', 1), price('b', 2), price('a', 3), price('b', null)]);
    expect(seqs(await waitForSnapshotAtEnd(pipeline))).toEqual(new Map([['a', 3]]));
  });

  it('a topic without snapshot: true keeps no snapshot and still dead-letters tombstones', async () => {
    const suffix = uniqueName('snapshot-off');
    const topic = `prices-${suffix}`;
    await createTopics(servers.admin, [{ topic, numPartitions: 1 }]);
    const logger = createLogger({ name: 'snapshot-test', destination: createMemorySink() });
    const kafka = new Kafka({ clientId: 'snapshot-test', brokers: servers.brokers, logLevel: logLevel.ERROR, logCreator: kafkaLogCreator(logger) });
    const redis = createIngestRedis({ mode: 'standalone', url: servers.redisServer.url, logger, connectionName: 'snapshot-off' });
    const reader = new Redis(servers.redisServer.url);
    const historyPrefix = `wsh-${suffix}`;
    const ingest = createIngest({ kafka, redis, schema: createWirestreamSchema(sdl(topic, false)), logger }, { groupId: `group-${suffix}`, historyPrefix, fromBeginning: true });
    onTestFinished(async () => {
      await ingest.stop();
      redis.disconnect();
      reader.disconnect();
    });
    await ingest.start();
    await servers.producer.send({ topic, acks: -1, messages: [price('a', 1), price('a', null)] });
    const layout = createRedisLayout('standalone', CHANNEL_PREFIX, historyPrefix);
    await waitFor(async () => (await reader.xlen(layout.streamKey(topic, 0))) > 0, { timeoutMs: ARRIVAL_TIMEOUT_MS, message: 'history of the put' });
    const dlq = new Kafka({ clientId: 'snapshot-dlq', brokers: servers.brokers, logLevel: logLevel.ERROR }).consumer({ groupId: uniqueName('dlq'), maxWaitTimeInMs: 250 });
    const dead: string[] = [];
    await dlq.connect();
    try {
      await dlq.subscribe({ topic: `${topic}.dlq`, fromBeginning: true });
      await dlq.run({ eachMessage: ({ message }) => Promise.resolve(void dead.push(String(message.headers?.[DEAD_LETTER_HEADERS.reason]))) });
      await waitFor(() => dead.length === 1, { timeoutMs: ARRIVAL_TIMEOUT_MS, message: 'the tombstone dead-lettered' });
    } finally {
      await dlq.disconnect();
    }
    expect(dead).toEqual(['EMPTY_VALUE']);
    expect(await reader.exists(layout.snapshotKey(topic, 0))).toBe(0);
  });
});

describe('snapshot scripts against redis-server', () => {
  it('refuses to run ahead of the stream (NOTSTORED, nothing written); a key in two partitions is answered from the later envelope', async () => {
    const redis = new Redis(servers.redisServer.url);
    onTestFinished(() => redis.disconnect());
    const layout = createRedisLayout('standalone', CHANNEL_PREFIX, uniqueName('wsh-scripts'));
    const hash = (partition: number) => layout.snapshotKey('t', partition);
    const envelope = (partition: number, offset: string, ts: number) => `{"v":1,"topic":"t","partition":${partition},"offset":"${offset}","key":"k","ts":${ts},"payload":{"seq":${offset}}}`;
    const apply = (partition: number, offset: string, ts: number) =>
      redis.eval(SNAPSHOT_APPLY_SCRIPT, 3, hash(partition), hash(partition) + SNAPSHOT_TOP_SUFFIX, layout.streamKey('t', partition), historyEntryId(offset), offset, 'k', envelope(partition, offset, ts));
    await expect(apply(0, '5', 100)).rejects.toThrow(new RegExp(`^${NOT_STORED_YET} .* holds no entry at or above 5-1`));
    expect(await redis.exists(hash(0), hash(0) + SNAPSHOT_TOP_SUFFIX)).toBe(0);
    await redis.xadd(layout.streamKey('t', 0), historyEntryId('5'), 'c', 'x', 'e', 'y');
    await redis.xadd(layout.streamKey('t', 1), historyEntryId('12345678901234567'), 'c', 'x', 'e', 'y');
    expect(await apply(0, '5', 100)).toBe(1);
    // Offsets beyond a Lua number's exact range compare as decimal strings.
    expect(await apply(1, '12345678901234567', 200)).toBe(1);
    expect(await apply(1, '12345678901234566', 300)).toBe(0);
    await redis.sadd(layout.partitionsKey('t'), 0, 1);
    const snapshot = await readSnapshot(redis, layout, 't', ['k'], 1);
    expect(snapshot.entries).toEqual([{ key: 'k', partition: 1, offset: '12345678901234567', envelope: envelope(1, '12345678901234567', 200) }]);
    expect(snapshot.positions).toEqual(new Map([[0, '5'], [1, '12345678901234567']]));
    // Thousands of keys in one read (beyond what Lua's unpack takes), answered in the order asked.
    const many = Array.from({ length: 9_000 }, (_, i) => (i === 8_999 ? 'k' : `absent-${i}`));
    const read = await readSnapshot(redis, layout, 't', many, 10_000);
    expect(read.entries.map((e) => [e.key, e.offset])).toEqual([['k', '12345678901234567']]);
  });
});

describe('snapshot (Redis Cluster)', () => {
  let cluster: RedisCluster;
  beforeAll(async () => {
    cluster = await startRedisCluster({ replicasPerPrimary: 0 });
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  it('keeps each partition snapshot in its slot, written in the chunk pipeline: latest per key, tombstones delete, readable with a Cluster client', async () => {
    const pipeline = await createPipeline('cluster', cluster);
    await pipeline.startIngest();
    const expected = await publishConcurrently(pipeline, 12, 10);
    await pipeline.produce([price('listing-0', null)]);
    expected.delete('listing-0');
    const snapshot = await waitForSnapshotAtEnd(pipeline);
    expect(seqs(snapshot)).toEqual(expected);
    expect(pipeline.layout.snapshotKey(pipeline.topic, 2)).toBe(`wsh-${pipeline.groupId.slice('group-'.length)}:{${pipeline.topic}:2}:snapshot`);
    await waitFor(() => pipeline.received.some((e) => e.deleted === true && e.key === 'listing-0'), { timeoutMs: ARRIVAL_TIMEOUT_MS, message: 'the deleted event' });
  });
});
