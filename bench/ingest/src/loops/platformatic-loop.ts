// The same minimal loop as kafkajs-loop.ts on @platformatic/kafka: a messages stream (object mode,
// one message at a time, partitions interleaved) cut into chunks of INGEST_PUBLISH_CHUNK messages,
// or fewer when the stream has nothing more buffered; publish, then commit the chunk's last
// offset of each partition in one OffsetCommit. INGEST_PARTITIONS_CONCURRENTLY does not apply.
import { Consumer, MessagesStreamFallbackModes, MessagesStreamModes, type Message } from '@platformatic/kafka';
import { loadLoopConfig } from './loop-config.js';
import { createChunkPublisher } from './publisher.js';

const config = loadLoopConfig();
const publisher = config.mode === 'publish' ? createChunkPublisher(config) : undefined;
const consumer = new Consumer({
  groupId: config.groupId,
  clientId: 'bench-platformatic-loop',
  bootstrapBrokers: config.brokers,
  autocommit: false,
});
// BENCH_PLATFORMATIC: extra consume() options as JSON (highWaterMark, maxBytes, maxBytesPerPartition...).
const extra = JSON.parse(process.env['BENCH_PLATFORMATIC'] ?? '{}') as Record<string, number>;
const stream = await consumer.consume({
  ...extra,
  topics: config.topics,
  mode: MessagesStreamModes.COMMITTED,
  fallbackMode: MessagesStreamFallbackModes.EARLIEST,
  autocommit: false,
});

let stopping = false;
const stop = async (): Promise<void> => {
  if (stopping) return;
  stopping = true;
  try {
    await stream.close();
    // close(true) resolves to the first overload (callback style, typed void): use that style explicitly.
    await new Promise<void>((resolve, reject) => consumer.close(true, (err) => (err ? reject(err) : resolve())));
  } catch {
    // exiting anyway
  }
  await publisher?.close();
  process.exit(0);
};
process.once('SIGTERM', () => void stop());
process.once('SIGINT', () => void stop());

let chunk: Message[] = [];
const lastOffsets = new Map<string, { topic: string; partition: number; offset: bigint; leaderEpoch: number }>();
for await (const message of stream) {
  chunk.push(message);
  if (chunk.length < config.chunk && stream.readableLength > 0) continue;
  const full = chunk;
  chunk = [];
  await publisher?.publish('', 0, full, 0, full.length);
  lastOffsets.clear();
  for (const m of full) {
    // -1: leader epoch unknown to the application; the broker then skips the epoch check.
    lastOffsets.set(`${m.topic}:${m.partition}`, { topic: m.topic, partition: m.partition, offset: m.offset + 1n, leaderEpoch: -1 });
  }
  await consumer.commit({ offsets: [...lastOffsets.values()] });
}
