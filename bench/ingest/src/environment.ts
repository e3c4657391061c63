import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { CompressionTypes, Kafka, Partitioners, logLevel, type Message, type Producer } from 'kafkajs';
import { createAuctionEventGenerator, type DemoEvent } from '@wirestream/demo-events';
import { auctionSchemaPath } from '@wirestream/schema';
import { startKafka, startRedis, uniqueName, waitFor, type KafkaBroker, type RedisServer } from '@wirestream/testkit';

/** The broker, Redis, topics and schema every run of the bench shares. */
export interface BenchEnvironment {
  readonly broker: KafkaBroker;
  readonly redis: RedisServer;
  readonly kafka: Kafka;
  /** Temp copy of the auction SDL whose @topic names are this run's unique topics. */
  readonly schemaPath: string;
  readonly listingTopic: string;
  readonly bidTopic: string;
  readonly topics: readonly string[];
  readonly workDir: string;
  /** Stops Redis and the broker and deletes the temp folder. Idempotent, never throws. */
  close(): Promise<void>;
}

export interface PreloadResult {
  readonly events: number;
  readonly listingEvents: number;
  readonly bidEvents: number;
  readonly valueBytes: number;
  readonly meanValueBytes: number;
  /** JSON.stringify of the generated events (not part of the produce time). */
  readonly generateMs: number;
  /** kafkajs sendBatch calls until the last ack. */
  readonly produceMs: number;
  readonly producedMiBPerS: number;
}

/** Starts a private broker and Redis (never the machine's shared ones) and creates both topics. */
export async function createBenchEnvironment({ partitions }: { partitions: number }): Promise<BenchEnvironment> {
  const workDir = mkdtempSync(join(tmpdir(), 'wirestream-bench-ingest-'));
  let broker: KafkaBroker | undefined;
  let redis: RedisServer | undefined;
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> =>
    (closing ??= (async () => {
      await redis?.stop().catch(() => undefined);
      await broker?.stop().catch(() => undefined);
      rmSync(workDir, { recursive: true, force: true });
    })());
  try {
    [broker, redis] = await Promise.all([startKafka(), startRedis()]);
    const suffix = uniqueName('bench');
    const listingTopic = `listing-events-${suffix}`;
    const bidTopic = `bid-events-${suffix}`;
    const schemaPath = join(workDir, 'schema.graphql');
    writeFileSync(
      schemaPath,
      readFileSync(auctionSchemaPath, 'utf8')
        .replace('name: "listing-events"', `name: "${listingTopic}"`)
        .replace('name: "bid-events"', `name: "${bidTopic}"`),
    );
    const kafka = new Kafka({ clientId: 'bench-ingest', brokers: broker.brokers, logLevel: logLevel.ERROR });
    const admin = kafka.admin();
    await admin.connect();
    try {
      await admin.createTopics({
        waitForLeaders: true,
        topics: [listingTopic, bidTopic].map((topic) => ({ topic, numPartitions: partitions })),
      });
      // The first group request creates __consumer_offsets (kafkajs retries "coordinator not
      // available" meanwhile): do it now, not inside the first measured run.
      // GROUP_LOAD_IN_PROGRESS and friends are retriable but not retried by admin.fetchOffsets.
      await waitFor(() => admin.fetchOffsets({ groupId: uniqueName('bench-warm'), topics: [listingTopic, bidTopic] }), {
        timeoutMs: 60_000,
        intervalMs: 200,
        message: 'the group coordinator to answer OffsetFetch',
      });
    } finally {
      await admin.disconnect();
    }
    return { broker, redis, kafka, schemaPath, listingTopic, bidTopic, topics: [listingTopic, bidTopic], workDir, close };
  } catch (error) {
    await close();
    throw error;
  }
}

export interface PreloadOptions {
  readonly events: number;
  /** Messages per sendBatch call (spread over the topics' partitions; each partition's record batch must stay under the broker's 1 MiB message.max.bytes). */
  readonly messagesPerSend?: number;
  /** sendBatch calls in flight at once. */
  readonly sendsInFlight?: number;
  /** Distinct listing ids: enough that keys spread evenly over partitions and Redis shards. */
  readonly listings?: number;
  readonly seed?: number;
  /** The topics to fill (default: the environment's own pair). */
  readonly topics?: { readonly listing: string; readonly bid: string };
  /** The Kafka value of an event (default: its JSON, as the demo producer writes it). Part of the generate time. */
  readonly encode?: (event: DemoEvent) => Buffer | Promise<Buffer>;
}

/**
 * Fills the topics with realistic auction events (≈70 % listing events of ~2.3 KB, ≈30 % bid
 * events of ~0.4 KB, so ~1.7 KB on average), keyed by listing id with the Java-compatible
 * partitioner, uncompressed, acks=1. Values are serialized before the clock starts. The same
 * seed gives the same events in every encoding (`encode`).
 */
export async function preload(env: BenchEnvironment, options: PreloadOptions): Promise<PreloadResult> {
  const { events, messagesPerSend = 2_000, sendsInFlight = 4, listings = 5_000, seed = 42 } = options;
  const { listing, bid } = options.topics ?? { listing: env.listingTopic, bid: env.bidTopic };
  const encode = options.encode ?? ((event: DemoEvent): Buffer => Buffer.from(JSON.stringify(event.value)));
  const generator = createAuctionEventGenerator({ seed, listings });
  const topicOf = (e: DemoEvent): string => (e.topic === 'listing-events' ? listing : bid);

  const generateStarted = performance.now();
  const sends: { topic: string; messages: Message[] }[][] = [];
  let valueBytes = 0;
  let listingEvents = 0;
  for (let start = 0; start < events; start += messagesPerSend) {
    const byTopic = new Map<string, Message[]>();
    for (let i = start; i < Math.min(events, start + messagesPerSend); i++) {
      const event = generator.next();
      const value = await encode(event);
      valueBytes += value.length;
      if (event.topic === 'listing-events') listingEvents++;
      const topic = topicOf(event);
      let list = byTopic.get(topic);
      if (!list) byTopic.set(topic, (list = []));
      list.push({ key: event.key, value });
    }
    sends.push([...byTopic].map(([topic, messages]) => ({ topic, messages })));
  }
  const generateMs = performance.now() - generateStarted;

  const producer: Producer = env.kafka.producer({
    createPartitioner: Partitioners.DefaultPartitioner,
    allowAutoTopicCreation: false,
  });
  await producer.connect();
  const produceStarted = performance.now();
  try {
    let next = 0;
    const sender = async (): Promise<void> => {
      while (next < sends.length) {
        const topicMessages = sends[next++] ?? [];
        await producer.sendBatch({ topicMessages, acks: 1, compression: CompressionTypes.None });
      }
    };
    await Promise.all(Array.from({ length: sendsInFlight }, sender));
  } finally {
    await producer.disconnect();
  }
  const produceMs = performance.now() - produceStarted;
  return {
    events,
    listingEvents,
    bidEvents: events - listingEvents,
    valueBytes,
    meanValueBytes: valueBytes / events,
    generateMs,
    produceMs,
    producedMiBPerS: valueBytes / 1_048_576 / (produceMs / 1000),
  };
}

/** Sum of the high watermarks of the topics: what a consumer group must have committed at the end. */
export async function highWatermarks(kafka: Kafka, topics: readonly string[]): Promise<number> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    let total = 0;
    for (const topic of topics) {
      for (const p of await admin.fetchTopicOffsets(topic)) total += Number(p.high);
    }
    return total;
  } finally {
    await admin.disconnect();
  }
}
