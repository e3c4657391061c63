import { Partitioners, type Consumer, type EachBatchPayload, type Kafka, type KafkaMessage, type Message, type Producer } from 'kafkajs';
import type { Redis } from 'ioredis';
import type { Logger } from '@wirestream/telemetry';
import { channelName, createEnvelopeHeadEncoder, shardOf, type WirestreamSchema } from '@wirestream/schema';
import { createDeadLetter, type DeadLetterReason } from './dead-letter.js';
import { createEventConverter } from './event-converter.js';
import type { IngestMetrics } from './metrics.js';

/** What ingest needs from the outside world; `main.ts` builds the real ones, tests pass their own. */
export interface IngestDeps {
  /** kafkajs client; ingest creates its own consumer, producer (dead letters) and admin from it. */
  readonly kafka: Kafka;
  /** ioredis connection used for publishing (not in subscriber mode). */
  readonly redis: Redis;
  readonly schema: WirestreamSchema;
  readonly logger: Logger;
  /** Prometheus series; optional so tests and tools can run without a registry. */
  readonly metrics?: IngestMetrics;
}

export interface IngestOptions {
  /** Kafka consumer group shared by all ingest replicas. @default 'wirestream-ingest' */
  readonly groupId?: string;
  /** Prefix of the Redis channels (must match the gateway's). @default 'ws' */
  readonly channelPrefix?: string;
  /** Dead letters of topic `t` go to `t + dlqSuffix`. @default '.dlq' */
  readonly dlqSuffix?: string;
  /** Larger messages are dead-lettered, not parsed. @default 1_048_576 (1 MiB) */
  readonly maxMessageBytes?: number;
  /** Messages per Redis pipeline, and so per offset commit. @default 500 */
  readonly publishChunkSize?: number;
  /** Partitions processed concurrently by one replica. @default 3 */
  readonly partitionsConcurrently?: number;
  /** A new consumer group starts at the earliest offset so nothing already in Kafka is skipped. @default true */
  readonly fromBeginning?: boolean;
  /** Maximum nesting depth of a payload before it is dead-lettered. @default 64 */
  readonly maxDepth?: number;
  /**
   * Longest a fetch waits for data. Also bounds how long `stop()` waits for an idle fetch
   * (kafkajs's own default is 5 s). @default 1_000 (1 s)
   */
  readonly fetchMaxWaitMs?: number;
  /** How often to look for source topics that do not exist yet. @default 500 */
  readonly topicPollIntervalMs?: number;
  /** How often to log that ingest is still waiting for topics. @default 10_000 (10 s) */
  readonly topicWaitLogIntervalMs?: number;
}

export interface IngestStats {
  consumed: number;
  published: number;
  deadLettered: number;
  commits: number;
}

export interface Ingest {
  /** Creates dead-letter topics, joins the consumer group and starts consuming. */
  start(): Promise<void>;
  /** Finishes the batch in flight (publish + commit), leaves the group, disconnects Kafka clients. */
  stop(): Promise<void>;
  /** True once the consumer joined its group and Redis is connected. */
  isReady(): boolean;
  /** Why ingest is not ready (for /readyz). */
  notReadyReason(): string;
  readonly stats: Readonly<IngestStats>;
}

/** Builds the ingest pipeline: Kafka topics named by the schema → snake_case → Redis envelopes. */
export function createIngest(deps: IngestDeps, options: IngestOptions = {}): Ingest {
  const { kafka, redis, schema, logger, metrics } = deps;
  const {
    groupId = 'wirestream-ingest',
    channelPrefix = 'ws',
    dlqSuffix = '.dlq',
    maxMessageBytes = 1_048_576, // 1 MiB
    publishChunkSize = 500,
    partitionsConcurrently = 3,
    fromBeginning = true,
    maxDepth = 64,
    fetchMaxWaitMs = 1_000, // 1 second
    topicPollIntervalMs = 500,
    topicWaitLogIntervalMs = 10_000, // 10 seconds
  } = options;
  if (!Number.isInteger(publishChunkSize) || publishChunkSize < 1) {
    throw new RangeError(`publishChunkSize must be a positive integer, got ${publishChunkSize}`);
  }
  if (schema.topics.some((t) => t.endsWith(dlqSuffix))) {
    throw new RangeError(`a schema topic ends with the dead-letter suffix "${dlqSuffix}": ingest would consume its own dead letters`);
  }

  const stats: IngestStats = { consumed: 0, published: 0, deadLettered: 0, commits: 0 };
  const convert = createEventConverter({ maxMessageBytes, maxDepth });
  // Routing per topic is fixed by the schema: resolve it once, not per message.
  const routing = new Map(
    schema.topics.map((topic) => {
      const route = schema.routesForTopic(topic)[0];
      return [topic, { keyField: route?.keyField, shards: route?.shards ?? 1, encodeHead: createEnvelopeHeadEncoder(topic) }] as const;
    }),
  );

  let consumer: Consumer | undefined;
  let producer: Producer | undefined;
  let joined = false;
  let stopped = false;

  async function handleBatch(payload: EachBatchPayload): Promise<void> {
    const { batch, resolveOffset, commitOffsetsIfNecessary, heartbeat, isRunning, isStale } = payload;
    const { topic, partition, messages } = batch;
    const route = routing.get(topic);
    if (!route || messages.length === 0 || !consumer || !producer) return;
    const series = metrics?.forTopic(topic);

    for (let start = 0; start < messages.length; start += publishChunkSize) {
      // A rebalance took the partition away: the new owner resumes from our last commit.
      if (!isRunning() || isStale()) return;
      const end = Math.min(messages.length, start + publishChunkSize);
      const pipeline = redis.pipeline();
      const deadLetters: Message[] = [];
      let publishes = 0;
      // Deliberately imperative: this loop runs once per event.
      for (let i = start; i < end; i++) {
        const message = messages[i] as KafkaMessage;
        const key = message.key === null ? null : message.key.toString();
        const head = route.encodeHead(partition, message.offset, key, Number(message.timestamp));
        const result = convert(message.value, head, route.keyField);
        if (result.ok) {
          // The payload's key field routes; a payload without it falls back to the Kafka key.
          const routeKey = result.routeValue ?? key ?? '';
          pipeline.publish(channelName(channelPrefix, topic, shardOf(routeKey, route.shards)), result.bytes);
          publishes++;
        } else {
          deadLetters.push(createDeadLetter(topic, partition, message, result.reason));
          logDeadLetter(topic, partition, message.offset, result.reason);
        }
      }
      stats.consumed += end - start;
      series?.consumed.inc(end - start);

      // Dead letters and publishes must both be acknowledged before the commit: at-least-once.
      if (deadLetters.length > 0) {
        await producer.send({ topic: topic + dlqSuffix, acks: -1, messages: deadLetters });
        stats.deadLettered += deadLetters.length;
        series?.deadLettered.inc(deadLetters.length);
      }
      if (publishes > 0) {
        const started = performance.now();
        const results = await pipeline.exec();
        metrics?.redisPublishSeconds.observe((performance.now() - started) / 1_000);
        const failed = results?.find(([err]) => err !== null);
        if (!results || failed) {
          // Throwing makes kafkajs retry the batch from the last committed offset.
          throw new Error(`Redis rejected a publish for ${topic}[${partition}]: ${String(failed?.[0] ?? 'pipeline discarded')}`);
        }
        stats.published += publishes;
        series?.published.inc(publishes);
      }
      const last = (messages[end - 1] as KafkaMessage).offset;
      resolveOffset(last);
      // Not consumer.commitOffsets(): kafkajs skips that silently once stop() began, which would lose
      // the commit of the batch that stop() waits for. With explicit offsets this commits at once.
      await commitOffsetsIfNecessary({ topics: [{ topic, partitions: [{ partition, offset: (BigInt(last) + 1n).toString() }] }] });
      stats.commits++;
      // highWatermark is the next offset the partition will get: lag = what is left after `last`.
      metrics?.setLag(topic, partition, Math.max(0, Number(BigInt(batch.highWatermark) - BigInt(last) - 1n)));
      await heartbeat();
    }
  }

  function logDeadLetter(topic: string, partition: number, offset: string, reason: DeadLetterReason): void {
    logger.warn({ topic, partition, offset, reason: reason.code, detail: reason.message }, 'message dead-lettered');
  }

  /**
   * Source topics belong to their producers: ingest waits for them instead of creating them
   * (auto-creation would pick the broker's default partition count behind the owner's back).
   * Dead-letter topics are ingest's own, so it creates those.
   */
  async function prepareTopics(): Promise<void> {
    const admin = kafka.admin();
    await admin.connect();
    try {
      let lastLogged = 0;
      for (;;) {
        const existing = new Set(await admin.listTopics());
        const waitingFor = schema.topics.filter((t) => !existing.has(t));
        if (waitingFor.length === 0) {
          const missing = schema.topics.map((t) => t + dlqSuffix).filter((t) => !existing.has(t));
          if (missing.length > 0) {
            await admin.createTopics({ waitForLeaders: true, topics: missing.map((topic) => ({ topic })) });
            logger.info({ topics: missing }, 'created dead-letter topics');
          }
          return;
        }
        if (stopped) throw new Error('ingest stopped while waiting for its topics');
        if (Date.now() - lastLogged >= topicWaitLogIntervalMs) {
          logger.warn({ topics: waitingFor }, 'waiting for Kafka topics to exist (create them, or start the producer)');
          lastLogged = Date.now();
        }
        await new Promise((resolve) => setTimeout(resolve, topicPollIntervalMs));
      }
    } finally {
      await admin.disconnect();
    }
  }

  return {
    stats,
    isReady: () => joined && redis.status === 'ready',
    notReadyReason: () => (stopped ? 'stopping' : !joined ? 'not in the consumer group yet' : `redis ${redis.status}`),

    async start() {
      await prepareTopics();
      // The Java-compatible murmur2 partitioner: dead letters of one key land together, like any Kafka client's.
      producer = kafka.producer({ allowAutoTopicCreation: true, createPartitioner: Partitioners.DefaultPartitioner });
      await producer.connect();
      consumer = kafka.consumer({ groupId, allowAutoTopicCreation: true, maxWaitTimeInMs: fetchMaxWaitMs });
      consumer.on(consumer.events.GROUP_JOIN, (e) => {
        joined = true;
        logger.info({ groupId, memberId: e.payload.memberId, assignment: e.payload.memberAssignment }, 'joined consumer group');
      });
      consumer.on(consumer.events.CRASH, (e) => {
        joined = false;
        logger.error({ err: e.payload.error, restart: e.payload.restart }, 'consumer crashed');
      });
      await consumer.connect();
      await consumer.subscribe({ topics: [...schema.topics], fromBeginning });
      await consumer.run({
        autoCommit: false,
        eachBatchAutoResolve: false,
        partitionsConsumedConcurrently: partitionsConcurrently,
        eachBatch: handleBatch,
      });
      logger.info({ topics: schema.topics, groupId }, 'ingest consuming');
    },

    async stop() {
      joined = false;
      stopped = true;
      // consumer.disconnect() waits for the batch in flight, so its commit is not lost.
      await consumer?.disconnect();
      await producer?.disconnect();
      logger.info({ ...stats }, 'ingest stopped');
    },
  };
}
