// Kafka-client-independent half of the minimal loops: convert a chunk of messages and publish it.
import { Redis } from 'ioredis';
import { createEventConverter } from '@wirestream/ingest';
import { channelName, encodeEnvelopeHead, shardOf } from '@wirestream/wire';
import { createKeyTransformer, type KeyTransformer } from '@wirestream/transform';
import type { LoopConfig } from './loop-config.js';

/** The fields of a Kafka record the loops need, whichever client decoded it. */
export interface LoopMessage {
  /** Set by clients whose chunks mix partitions; kafkajs batches give topic and partition per batch. */
  readonly topic?: string;
  readonly partition?: number;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  /** Decimal string (kafkajs) or bigint (@platformatic/kafka). */
  readonly offset: string | bigint;
  /** ms since epoch (kafkajs gives it as a decimal string). */
  readonly timestamp: string | number | bigint;
}

export interface ChunkPublisher {
  /** Converts messages[start, end) and publishes them; resolves once Redis acknowledged all. */
  publish(topic: string, partition: number, messages: readonly LoopMessage[], start: number, end: number): Promise<void>;
  close(): Promise<void>;
}

// One EVALSHA publishes the whole chunk: one command, one reply, one promise instead of N.
const PUBLISH_BATCH_LUA = `
for i = 1, #ARGV, 2 do redis.call('PUBLISH', ARGV[i], ARGV[i + 1]) end
return #ARGV / 2`;

const NO_ROUTE = { keyField: undefined, shards: 1 };

export function createChunkPublisher(config: LoopConfig): ChunkPublisher {
  const redis = new Redis(config.redisUrl, { maxRetriesPerRequest: null, connectionName: 'bench-loop' });
  redis.defineCommand('publishBatch', { numberOfKeys: 0, lua: PUBLISH_BATCH_LUA });
  const publishBatch = (redis as unknown as { publishBatch(...args: (string | Buffer)[]): Promise<number> }).publishBatch.bind(redis);
  const convert = createEventConverter();
  const transformer: KeyTransformer | undefined = config.convert === 'bytes' ? createKeyTransformer({ maxDepth: 64 }) : undefined;

  return {
    async publish(topic, partition, messages, start, end) {
      const args: (string | Buffer)[] = [];
      // Deliberately imperative: once per event.
      for (let i = start; i < end; i++) {
        const message = messages[i] as LoopMessage;
        if (message.topic !== undefined) {
          topic = message.topic;
          partition = message.partition ?? 0;
        }
        const route = config.routes.get(topic) ?? NO_ROUTE;
        const offset = String(message.offset);
        const key = message.key == null ? null : message.key.toString();
        let channel: string;
        let envelope: string | Buffer;
        if (transformer !== undefined) {
          // The bytes path never sees the payload as an object: it routes by the Kafka key, which
          // the demo producer sets to listing_id (the app routes by the payload field).
          channel = channelName('ws', topic, shardOf(key ?? '', route.shards));
          const head = '{"v":1,"topic":' + JSON.stringify(topic) + ',"partition":' + partition + ',"offset":"' + offset + '","key":' + (key === null ? 'null' : JSON.stringify(key)) + ',"ts":' + Number(message.timestamp) + ',"payload":';
          envelope = transformer.transformJsonBytes(message.value as Buffer, head, '}');
        } else {
          // The app's own converter (bytes in, envelope bytes out, routing field read on the way).
          const head = encodeEnvelopeHead({ topic, partition, offset, key, ts: Number(message.timestamp) });
          const result = convert(message.value, head, route.keyField);
          if (!result.ok) throw new Error(`bench data must convert: ${result.reason.message}`);
          channel = channelName('ws', topic, shardOf(result.routeValue ?? key ?? '', route.shards));
          envelope = result.bytes;
        }
        args.push(channel, envelope);
      }
      if (config.publish === 'lua') {
        await publishBatch(...args);
        return;
      }
      const pipeline = redis.pipeline();
      for (let i = 0; i < args.length; i += 2) pipeline.publish(args[i] as string, args[i + 1] as string);
      const results = await pipeline.exec();
      const failed = results?.find(([err]) => err !== null);
      if (!results || failed) throw new Error(`Redis rejected a publish: ${String(failed?.[0] ?? 'pipeline discarded')}`);
    },
    async close() {
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
