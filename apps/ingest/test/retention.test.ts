// Records lost to Kafka retention are never silent (issue #33), against the real broker: an ingest
// stops past its committed offsets, the log start moves beyond them (DeleteRecords moves it exactly
// where retention would, without waiting for a retention pass), and the next ingest of the group
// finds OFFSET_OUT_OF_RANGE. kafkajs resets to the earliest offset and carries on; ingest counts the
// skipped offsets per partition and logs their range as an error.
import { Kafka, logLevel, type Message } from 'kafkajs';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { createWirestreamSchema } from '@wirestream/schema';
import { createLogger, createMemorySink, createMetricsRegistry, type MemorySink } from '@wirestream/telemetry';
import { createTopics, startRedis, uniqueName, waitFor } from '@wirestream/testkit';
import { createIngest, createIngestMetrics, kafkaLogCreator, type Ingest } from '../src/index.js';
import { useKafkaRedis } from './support/kafka-redis.js';

const servers = useKafkaRedis('retention-test');

/** An in-process ingest of `topic` in `groupId`, configured as main.ts does, with its own log and metrics. */
async function startIngest(topic: string, groupId: string, redisUrl = servers.redisServer.url): Promise<{ ingest: Ingest; sink: MemorySink; lost: (partition: number) => Promise<number | undefined>; stop: () => Promise<void> }> {
  const sink = createMemorySink();
  const logger = createLogger({ name: 'retention-test', destination: sink });
  const schema = createWirestreamSchema(`type E { id: ID! n: Int }\ntype Subscription { e(id: ID): E @topic(name: "${topic}", key: "id") }\n`);
  const registry = createMetricsRegistry({ service: 'ingest', processMetrics: false });
  const redis = new Redis(redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 0, retryStrategy: () => 200 });
  redis.on('error', () => {});
  const kafka = new Kafka({ clientId: 'retention-ingest', brokers: servers.brokers, logLevel: logLevel.ERROR, logCreator: kafkaLogCreator(logger) });
  const ingest = createIngest({ kafka, redis, schema, logger, metrics: createIngestMetrics(registry, schema.topics) }, { groupId, fromBeginning: true, historyPrefix: `wsh-${groupId}` });
  await ingest.start();
  const lost = async (partition: number): Promise<number | undefined> => {
    const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === 'wirestream_ingest_offsets_lost_total');
    return metric?.values.find((v) => v.labels['topic'] === topic && v.labels['partition'] === String(partition))?.value;
  };
  return {
    ingest,
    sink,
    lost,
    stop: async () => {
      await ingest.stop();
      redis.disconnect();
    },
  };
}

/** `count` JSON events on `partition`, numbered from `from`. */
async function produce(topic: string, partition: number, from: number, count: number): Promise<void> {
  const messages: Message[] = Array.from({ length: count }, (_, i) => ({ partition, key: `k${from + i}`, value: JSON.stringify({ id: `k${from + i}`, n: from + i }) }));
  await servers.producer.send({ topic, acks: -1, messages });
}

describe('records deleted by retention before ingest read them', () => {
  it('counts the skipped offsets per partition and logs their range as an error; other partitions count 0', async () => {
    const topic = uniqueName('retention-events');
    const groupId = uniqueName('retention');
    await createTopics(servers.admin, [{ topic, numPartitions: 2 }]);
    await produce(topic, 0, 0, 10);
    await produce(topic, 1, 0, 10);

    const first = await startIngest(topic, groupId);
    try {
      await waitFor(() => first.ingest.stats.published === 20, { timeoutMs: 30_000, message: 'the first ingest to publish offsets 0-9 of both partitions' });
      await waitFor(() => first.ingest.stats.commits >= 2, { timeoutMs: 10_000, message: 'both partitions committed' });
      // The running ingest saw no reset: its partitions are bound, at 0.
      expect(await first.lost(0)).toBe(0);
    } finally {
      await first.stop();
    }

    // While no ingest runs: 10 more records per partition, then the log start of partition 0 moves
    // to 15, past the committed offset 10 (what retention does to a consumer that is down too long).
    await produce(topic, 0, 10, 10);
    await produce(topic, 1, 10, 10);
    await servers.admin.deleteTopicRecords({ topic, partitions: [{ partition: 0, offset: '15' }] });
    const low = (await servers.admin.fetchTopicOffsets(topic)).find((p) => p.partition === 0)?.low;
    expect(low).toBe('15');

    const second = await startIngest(topic, groupId);
    try {
      // Partition 0: 15-19 (10-14 are gone); partition 1: 10-19.
      await waitFor(() => second.ingest.stats.published === 15, { timeoutMs: 30_000, message: 'the second ingest to publish what is left' });
      expect(await second.lost(0)).toBe(5);
      expect(await second.lost(1)).toBe(0);
      const errors = second.sink.lines.filter((l) => typeof l['msg'] === 'string' && l['msg'].includes('deleted by retention'));
      expect(errors).toHaveLength(1);
      expect(errors[0]).toMatchObject({ level: 'error', topic, partition: 0, from: '10', to: '14', lost: 5, groupId });
      expect(errors[0]?.['msg']).toMatch(/^offsets 10\.\.14 of .+\/0 \(5\) were deleted by retention before ingest read them \(OFFSET_OUT_OF_RANGE; consumption resumed at 15\)/);
      // kafkajs's own line names the partition only; ours is the one with the range.
      expect(second.sink.lines.some((l) => l['msg'] === 'Offset out of range, resetting to default offset' && l['partition'] === 0)).toBe(true);
    } finally {
      await second.stop();
    }
  });

  it('a running ingest held back (Redis down) past the log start: the offsets after its last chunk are counted once', async () => {
    const topic = uniqueName('retention-running');
    const groupId = uniqueName('retention-running');
    await createTopics(servers.admin, [{ topic, numPartitions: 1 }]);
    const redisServer = await startRedis();
    const running = await startIngest(topic, groupId, redisServer.url);
    try {
      await produce(topic, 0, 0, 5);
      await waitFor(() => running.ingest.stats.published === 5, { timeoutMs: 30_000, message: 'offsets 0-4 published' });
      // Redis goes away: the next batch (5-9) waits in flight, consumption pauses.
      await redisServer.stop();
      await produce(topic, 0, 5, 5);
      await waitFor(() => running.ingest.stats.pauses >= 1, { timeoutMs: 30_000, message: 'ingest to pause with 5-9 in flight' });
      // Meanwhile retention passes: the log start moves to 12.
      await produce(topic, 0, 10, 5);
      await servers.admin.deleteTopicRecords({ topic, partitions: [{ partition: 0, offset: '12' }] });
      await redisServer.start();
      // 5-9 were already fetched: published from memory. 10-11 are gone; 12-14 follow.
      await waitFor(() => running.ingest.stats.published === 13, { timeoutMs: 30_000, message: 'the held batch and what is left published' });
      expect(await running.lost(0)).toBe(2);
      const errors = running.sink.lines.filter((l) => typeof l['msg'] === 'string' && l['msg'].includes('deleted by retention'));
      expect(errors.map((l) => [l['from'], l['to'], l['lost']])).toEqual([['10', '11', 2]]);
    } finally {
      await running.stop();
      await redisServer.stop();
    }
  });

  it('a restart with nothing deleted counts nothing, on a partition that had offsets committed', async () => {
    const topic = uniqueName('retention-kept');
    const groupId = uniqueName('retention-kept');
    await createTopics(servers.admin, [{ topic, numPartitions: 1 }]);
    await produce(topic, 0, 0, 5);
    const first = await startIngest(topic, groupId);
    try {
      await waitFor(() => first.ingest.stats.published === 5, { timeoutMs: 30_000, message: 'the first ingest to publish 0-4' });
    } finally {
      await first.stop();
    }
    await produce(topic, 0, 5, 5);
    const second = await startIngest(topic, groupId);
    try {
      await waitFor(() => second.ingest.stats.published === 5, { timeoutMs: 30_000, message: 'the second ingest to publish 5-9' });
      expect(await second.lost(0)).toBe(0);
      expect(second.sink.lines.filter((l) => l['level'] === 'error' || l['level'] === 'fatal')).toEqual([]);
    } finally {
      await second.stop();
    }
  });
});
