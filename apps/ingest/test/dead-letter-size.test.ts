// Nothing one message can stop (issue 13): a 2 MB value on a topic that allows 3 MiB, against the real
// broker. Before, its dead letter did not fit the dead-letter topic (broker default 1 MB), ingest paused
// every topic ("dead-letter topic unavailable") and the lag gauge read 0. Now the dead-letter topic is
// created to fit INGEST_MAX_MESSAGE_BYTES, a dead letter that still does not fit is sent truncated with its
// original size and SHA-256, the partition keeps flowing, and lag is read from the broker while paused.
import { createHash } from 'node:crypto';
import { ConfigResourceTypes, Kafka, logLevel } from 'kafkajs';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { createWirestreamSchema } from '@wirestream/schema';
import { createLogger, createMemorySink, createMetricsRegistry, type MemorySink } from '@wirestream/telemetry';
import { createTopics, uniqueName, waitFor } from '@wirestream/testkit';
import { createIngest, createIngestMetrics, DEAD_LETTER_HEADERS, DEAD_LETTER_TRUNCATION_HEADERS, kafkaLogCreator, type Ingest } from '../src/index.js';
import { useKafkaRedis } from './support/kafka-redis.js';

const servers = useKafkaRedis('dlq-size-test', { producer: { allowAutoTopicCreation: false } });

interface Running {
  readonly ingest: Ingest;
  readonly topic: string;
  readonly groupId: string;
  readonly sink: MemorySink;
  readonly lagOf: (partition: number) => Promise<number | undefined>;
  readonly stop: () => Promise<void>;
}

/** A topic allowing 3 MiB records (1 partition), and an in-process ingest on it, configured as main.ts does. */
async function startPipeline(prepare?: (topic: string) => Promise<void>): Promise<Running> {
  const topic = uniqueName('big-events');
  const groupId = uniqueName('dlq-size');
  await createTopics(servers.admin, [{ topic, numPartitions: 1, configEntries: [{ name: 'max.message.bytes', value: String(3 * 1_048_576) }] }]);
  await prepare?.(topic);
  const sink = createMemorySink();
  const logger = createLogger({ name: 'dlq-size-test', destination: sink });
  const schema = createWirestreamSchema(`type E { id: ID! blob: String }\ntype Subscription { e(id: ID): E @topic(name: "${topic}", key: "id") }\n`);
  const registry = createMetricsRegistry({ service: 'ingest' });
  const redis = new Redis(servers.redisServer.url, { enableOfflineQueue: false, maxRetriesPerRequest: 0, retryStrategy: () => 200 });
  redis.on('error', () => {});
  const kafka = new Kafka({ clientId: 'dlq-size-ingest', brokers: servers.brokers, logLevel: logLevel.ERROR, logCreator: kafkaLogCreator(logger) });
  const ingest = createIngest({ kafka, redis, schema, logger, metrics: createIngestMetrics(registry, schema.topics) }, { groupId, fromBeginning: true, historyPrefix: `wsh-${groupId}` });
  await ingest.start();
  await waitFor(() => ingest.isReady(), { timeoutMs: 30_000, message: 'ingest in its group' });
  const lagOf = async (partition: number): Promise<number | undefined> => {
    const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === 'wirestream_ingest_consumer_lag');
    const value = metric?.values.find((v) => v.labels['topic'] === topic && v.labels['partition'] === String(partition));
    return value?.value;
  };
  return {
    ingest,
    topic,
    groupId,
    sink,
    lagOf,
    stop: async () => {
      await ingest.stop();
      redis.disconnect();
    },
  };
}

const good = (id: string) => ({ key: id, value: JSON.stringify({ id, blob: 'small' }) });

async function committed(groupId: string, topic: string): Promise<string | undefined> {
  const [offsets] = await servers.admin.fetchOffsets({ groupId, topics: [topic] });
  return offsets?.partitions.find((p) => p.partition === 0)?.offset;
}

async function readDeadLetters(topic: string, count: number) {
  const consumer = new Kafka({ clientId: 'dlq-reader', brokers: servers.brokers, logLevel: logLevel.NOTHING }).consumer({ groupId: uniqueName('dlq-reader') });
  const letters: { value: Buffer | null; headers: Record<string, string> }[] = [];
  await consumer.connect();
  await consumer.subscribe({ topics: [`${topic}.dlq`], fromBeginning: true });
  await consumer.run({
    eachMessage: ({ message }) => {
      const headers = Object.fromEntries(Object.entries(message.headers ?? {}).map(([k, v]) => [k, String(v)]));
      letters.push({ value: message.value, headers });
      return Promise.resolve();
    },
  });
  try {
    await waitFor(() => letters.length >= count, { timeoutMs: 30_000, message: `${count} dead letter(s)` });
  } finally {
    await consumer.disconnect();
  }
  return letters;
}

describe('a value larger than the dead-letter topic allows (the 2 MB case)', () => {
  it('goes to the dead-letter topic truncated with its size and hash, while the partition keeps flowing', async () => {
    const run = await startPipeline();
    try {
      const big = Buffer.from(JSON.stringify({ id: 'big', blob: 'x'.repeat(2 * 1_048_576) }));
      await servers.producer.send({ topic: run.topic, acks: -1, messages: [good('a'), { key: 'big', value: big }, good('b')] });
      await waitFor(async () => (await committed(run.groupId, run.topic)) === '3', { timeoutMs: 30_000, message: 'every offset committed past the big message' });
      expect(run.ingest.stats).toMatchObject({ published: 2, deadLettered: 1, pauses: 0 });

      const [letter] = await readDeadLetters(run.topic, 1);
      expect(letter?.headers).toMatchObject({
        [DEAD_LETTER_HEADERS.reason]: 'TOO_LARGE',
        [DEAD_LETTER_TRUNCATION_HEADERS.truncated]: 'true',
        [DEAD_LETTER_TRUNCATION_HEADERS.originalSize]: String(big.length),
        [DEAD_LETTER_TRUNCATION_HEADERS.originalSha256]: createHash('sha256').update(big).digest('hex'),
        [DEAD_LETTER_HEADERS.offset]: '1',
      });
      expect(letter?.value?.length).toBeLessThan(big.length);
      expect(letter?.value?.equals(big.subarray(0, letter.value.length))).toBe(true); // its first bytes
      // The dead-letter topic ingest created fits INGEST_MAX_MESSAGE_BYTES (1 MiB) and headers.
      const described = await servers.admin.describeConfigs({ includeSynonyms: false, resources: [{ type: ConfigResourceTypes.TOPIC, name: `${run.topic}.dlq`, configNames: ['max.message.bytes'] }] });
      expect(Number(described.resources[0]?.configEntries[0]?.configValue)).toBe(1_048_576 + 65_536);
      expect(run.sink.lines.some((l) => String(l['msg']).includes('sent it truncated'))).toBe(true);
    } finally {
      await run.stop();
    }
  });

  it('raises a dead-letter topic created too small beforehand', async () => {
    const run = await startPipeline((topic) => createTopics(servers.admin, [{ topic: `${topic}.dlq`, numPartitions: 1, configEntries: [{ name: 'max.message.bytes', value: '100000' }] }]));
    try {
      const described = await servers.admin.describeConfigs({ includeSynonyms: false, resources: [{ type: ConfigResourceTypes.TOPIC, name: `${run.topic}.dlq`, configNames: ['max.message.bytes'] }] });
      expect(Number(described.resources[0]?.configEntries[0]?.configValue)).toBe(1_048_576 + 65_536);
      expect(run.sink.lines.some((l) => l['msg'] === 'raised max.message.bytes of a dead-letter topic to fit INGEST_MAX_MESSAGE_BYTES')).toBe(true);
    } finally {
      await run.stop();
    }
  });
});

describe('consumer lag while paused', () => {
  it('is read from the broker (committed offsets vs high watermark), not frozen at the last commit', async () => {
    const run = await startPipeline();
    try {
      await servers.producer.send({ topic: run.topic, acks: -1, messages: [good('first')] });
      await waitFor(async () => (await committed(run.groupId, run.topic)) === '1', { timeoutMs: 30_000, message: 'first event committed' });
      await waitFor(async () => (await run.lagOf(0)) === 0, { timeoutMs: 15_000, message: 'lag 0 once caught up' });
      await servers.redisServer.stop(); // ingest pauses: nothing is committed from now on
      await servers.producer.send({ topic: run.topic, acks: -1, messages: Array.from({ length: 30 }, (_, i) => good(`p${i}`)) });
      await waitFor(async () => (await run.lagOf(0)) === 30, { timeoutMs: 20_000, message: 'lag 30 while paused' });
      await servers.redisServer.start();
      await waitFor(async () => (await committed(run.groupId, run.topic)) === '31', { timeoutMs: 30_000, message: 'caught up after Redis came back' });
      await waitFor(async () => (await run.lagOf(0)) === 0, { timeoutMs: 15_000, message: 'lag back to 0' });
    } finally {
      await run.stop();
    }
  });
});
