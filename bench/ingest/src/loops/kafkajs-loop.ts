// Minimal consume → convert → publish → commit loop on kafkajs, shaped like apps/ingest's
// handleBatch (chunks, commit after the Redis ack), without dead letters, logging or stop logic.
// BENCH_LOOP_MODE=consume-only skips convert and publish: what the Kafka client alone costs.
import { Kafka, logLevel, type KafkaMessage } from 'kafkajs';
import { loadLoopConfig } from './loop-config.js';
import { createChunkPublisher } from './publisher.js';

const config = loadLoopConfig();
const publisher = config.mode === 'publish' ? createChunkPublisher(config) : undefined;
const kafka = new Kafka({ clientId: 'bench-kafkajs-loop', brokers: config.brokers, logLevel: logLevel.ERROR });
const consumer = kafka.consumer({ groupId: config.groupId });
await consumer.connect();
await consumer.subscribe({ topics: config.topics, fromBeginning: true });

await consumer.run({
  autoCommit: false,
  eachBatchAutoResolve: false,
  partitionsConsumedConcurrently: config.partitionsConcurrently,
  eachBatch: async (payload) => {
    const { topic, partition, messages } = payload.batch;
    for (let start = 0; start < messages.length; start += config.chunk) {
      const end = Math.min(messages.length, start + config.chunk);
      await publisher?.publish(topic, partition, messages, start, end);
      const last = (messages[end - 1] as KafkaMessage).offset;
      payload.resolveOffset(last);
      await payload.commitOffsetsIfNecessary({ topics: [{ topic, partitions: [{ partition, offset: (BigInt(last) + 1n).toString() }] }] });
      await payload.heartbeat();
    }
  },
});

const stop = async (): Promise<void> => {
  await consumer.disconnect();
  await publisher?.close();
  process.exit(0);
};
process.once('SIGTERM', () => void stop());
process.once('SIGINT', () => void stop());
