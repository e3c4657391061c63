import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Partitioners, type Consumer, type EachBatchPayload, type Kafka, type KafkaMessage, type Message, type Producer } from 'kafkajs';
import type { Redis } from 'ioredis';
import type { Logger } from '@wirestream/telemetry';
import {
  channelName,
  createEnvelopeHeadEncoder,
  DEFAULT_HISTORY_PREFIX,
  HISTORY_ALREADY_STORED,
  HISTORY_FIELD_CHANNEL,
  HISTORY_FIELD_ENVELOPE,
  historyEntryId,
  historyEpochKey,
  historyPartitionsKey,
  historyStreamKey,
  shardOf,
  type WirestreamSchema,
} from '@wirestream/schema';
import { createDeadLetter, type DeadLetterReason } from './dead-letter.js';
import { createEventConverter, type ConvertResult } from './event-converter.js';
import type { IngestMetrics } from './metrics.js';

/** Kafka value → envelope bytes; see {@link createEventConverter}. */
export type EventConverter = (value: Buffer | null, envelopeHead?: string, routeField?: string) => ConvertResult;

/** What ingest needs from the outside world; `main.ts` builds the real ones, tests pass their own. */
export interface IngestDeps {
  /** kafkajs client; ingest creates its own consumer, producer (dead letters) and admin from it. */
  readonly kafka: Kafka;
  /**
   * ioredis connection used for publishing (not in subscriber mode). Build it with
   * `enableOfflineQueue: false` and `maxRetriesPerRequest: 0` (see main.ts): ingest retries a
   * chunk itself, and a command parked in ioredis's queue would block that and `stop()`.
   */
  readonly redis: Redis;
  readonly schema: WirestreamSchema;
  readonly logger: Logger;
  /** Prometheus series; optional so tests and tools can run without a registry. */
  readonly metrics?: IngestMetrics;
  /**
   * The per-message conversion. Tests pass one that throws to exercise poison-message handling.
   * @default createEventConverter({ maxMessageBytes, maxDepth })
   */
  readonly convert?: EventConverter;
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
  /** History entries kept per partition stream (`XADD … MAXLEN ~`); 0 writes no history. @default 10_000 */
  readonly historyLength?: number;
  /** Prefix of the history keys (must match the gateway's). @default DEFAULT_HISTORY_PREFIX ('wsh') */
  readonly historyPrefix?: string;
  /** Re-runs of a message whose processing throws before it is dead-lettered. @default 3 */
  readonly maxRetries?: number;
  /** First pause before a retry (of a poison message or an undeliverable chunk); doubles up to 2 s. @default 100 */
  readonly retryBackoffMs?: number;
  /**
   * A chunk's pipeline not answered within this is treated as Redis being down: the connection
   * is dropped (failing what it still holds) and the chunk redone once Redis is back. One timer
   * per chunk, not ioredis's `commandTimeout` (a timer per command, two per event). @default 10_000 (10 s)
   */
  readonly redisTimeoutMs?: number;
  /**
   * How long a batch waiting for Redis (or the dead-letter topic) may keep `stop()` waiting
   * before it is abandoned uncommitted, for the next owner to redo. @default 5_000 (5 s)
   */
  readonly stopGraceMs?: number;
}

export interface IngestStats {
  consumed: number;
  published: number;
  deadLettered: number;
  commits: number;
  /** Times consumption was paused because a chunk could not be delivered. */
  pauses: number;
}

export interface Ingest {
  /** Creates dead-letter topics, joins the consumer group and starts consuming. */
  start(): Promise<void>;
  /**
   * Finishes the batch in flight (publish + commit), leaves the group, disconnects Kafka clients.
   * A batch that cannot be delivered (Redis down) is abandoned uncommitted after `stopGraceMs`.
   */
  stop(): Promise<void>;
  /** True once the consumer joined its group, Redis is connected and consumption is not paused. */
  isReady(): boolean;
  /** Why ingest is not ready (for /readyz). */
  notReadyReason(): string;
  readonly stats: Readonly<IngestStats>;
}

const MAX_BACKOFF_MS = 2_000; // 2 seconds: a recovered Redis is used within this
const WAIT_STEP_MS = 250; // how often a waiting batch re-checks stop/staleness and heartbeats
const PAUSE_PROBE_MS = 500; // how often a paused consumer checks whether Redis is back

interface Route {
  readonly keyField: string | undefined;
  readonly shards: number;
  readonly encodeHead: ReturnType<typeof createEnvelopeHeadEncoder>;
}

/** One chunk's work, built in offset order: envelopes to publish and messages to dead-letter. */
interface Chunk {
  readonly channels: string[];
  readonly bodies: Buffer[];
  readonly offsets: string[];
  readonly deadLetters: Message[];
}

type PauseKind = 'redis unavailable' | 'dead-letter topic unavailable';

/** Thrown out of the per-message work when the batch must be given up (stop, rebalance). */
const ABANDONED = Symbol('abandoned');

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
    historyLength = 10_000,
    historyPrefix = DEFAULT_HISTORY_PREFIX,
    maxRetries = 3,
    retryBackoffMs = 100,
    stopGraceMs = 5_000, // 5 seconds
    redisTimeoutMs = 10_000, // 10 seconds, far above a 500-envelope pipeline's few milliseconds
  } = options;
  if (!Number.isInteger(publishChunkSize) || publishChunkSize < 1) {
    throw new RangeError(`publishChunkSize must be a positive integer, got ${publishChunkSize}`);
  }
  if (!Number.isInteger(historyLength) || historyLength < 0) {
    throw new RangeError(`historyLength must be an integer >= 0 (0 disables history), got ${historyLength}`);
  }
  if (!Number.isInteger(maxRetries) || maxRetries < 0) {
    throw new RangeError(`maxRetries must be an integer >= 0, got ${maxRetries}`);
  }
  if (schema.topics.some((t) => t.endsWith(dlqSuffix))) {
    throw new RangeError(`a schema topic ends with the dead-letter suffix "${dlqSuffix}": ingest would consume its own dead letters`);
  }

  const stats: IngestStats = { consumed: 0, published: 0, deadLettered: 0, commits: 0, pauses: 0 };
  const convert = deps.convert ?? createEventConverter({ maxMessageBytes, maxDepth });
  // Routing per topic is fixed by the schema: resolve it once, not per message.
  const routing = new Map<string, Route>(
    schema.topics.map((topic) => {
      const route = schema.routesForTopic(topic)[0];
      return [topic, { keyField: route?.keyField, shards: route?.shards ?? 1, encodeHead: createEnvelopeHeadEncoder(topic) }] as const;
    }),
  );
  const historyMaxLen = String(historyLength);

  let consumer: Consumer | undefined;
  let producer: Producer | undefined;
  let joined = false;
  let stopped = false;
  let stopDeadline = Infinity;
  /** Why consumption is paused, or undefined while it flows. */
  let pausedFor: PauseKind | undefined;
  /** Batches inside deliverChunk's retry wait. */
  let waitingBatches = 0;
  let pauseProbe: NodeJS.Timeout | undefined;

  // ---- pause / resume ---------------------------------------------------------------------

  /**
   * Stops fetching every topic while a chunk cannot be delivered. The batch in flight keeps
   * waiting inside eachBatch (heartbeating, so the group keeps the partition); pausing stops the
   * other partitions from fetching batches that would only wait too. Nothing is committed.
   */
  function pause(kind: PauseKind): void {
    if (pausedFor !== undefined || stopped) return;
    pausedFor = kind;
    stats.pauses++;
    metrics?.pauses.inc();
    metrics?.paused.set(1);
    consumer?.pause(schema.topics.map((topic) => ({ topic })));
    logger.warn({ reason: kind, redis: redis.status }, 'consumption paused');
    // A probe resumes, not only the waiting batch: after a rebalance no batch may be left to do it.
    // A dead-letter outage is only over when its batch gets through, unless that batch is gone.
    pauseProbe = setInterval(() => {
      if (redis.status === 'ready' && (pausedFor === 'redis unavailable' || waitingBatches === 0)) resume();
    }, PAUSE_PROBE_MS);
  }

  function resume(): void {
    if (pausedFor === undefined) return;
    clearInterval(pauseProbe);
    pauseProbe = undefined;
    pausedFor = undefined;
    metrics?.paused.set(0);
    consumer?.resume(schema.topics.map((topic) => ({ topic })));
    logger.info('consumption resumed');
  }

  // ---- history epoch ----------------------------------------------------------------------

  /** Names this life of the history; a Redis that lost its data gets a new one (SET NX GET, Redis ≥ 7). */
  async function ensureEpoch(): Promise<void> {
    if (historyLength === 0) return;
    const candidate = randomUUID();
    try {
      const previous = (await answeredWithin(redis.call('SET', historyEpochKey(historyPrefix), candidate, 'NX', 'GET'), 'the history epoch')) as string | null;
      logger.info({ epoch: previous ?? candidate, created: previous === null }, 'history epoch');
    } catch (err) {
      // The next 'ready' tries again; history entries written meanwhile still have their offsets.
      logger.warn({ err }, 'could not read or create the history epoch');
    }
  }
  const onRedisReady = (): void => void ensureEpoch();

  // ---- per message ------------------------------------------------------------------------

  /**
   * Converts one message and appends it to the chunk (last, so a throw leaves the chunk as it
   * was). Returns the dead-letter reason of a message that cannot be published.
   */
  function processMessage(topic: string, partition: number, route: Route, message: KafkaMessage, chunk: Chunk): DeadLetterReason | undefined {
    const key = message.key === null ? null : message.key.toString();
    const head = route.encodeHead(partition, message.offset, key, Number(message.timestamp));
    const result = convert(message.value, head, route.keyField);
    if (!result.ok) return result.reason;
    // The payload's key field routes; a payload without it falls back to the Kafka key.
    const routeKey = result.routeValue ?? key ?? '';
    const channel = channelName(channelPrefix, topic, shardOf(routeKey, route.shards));
    chunk.channels.push(channel);
    chunk.bodies.push(result.bytes);
    chunk.offsets.push(message.offset);
    return undefined;
  }

  /**
   * A message whose processing threw (a bug or a resource failure, not bad input: the converter
   * reports those as reasons) is re-run `maxRetries` times with backoff, then dead-lettered.
   */
  async function retryPoison(
    topic: string,
    partition: number,
    route: Route,
    message: KafkaMessage,
    chunk: Chunk,
    firstError: unknown,
    payload: EachBatchPayload,
  ): Promise<DeadLetterReason | undefined> {
    let error = firstError;
    for (let attempt = 1; attempt <= maxRetries; attempt++) {
      logger.warn({ topic, partition, offset: message.offset, attempt, err: error }, 'processing a message threw; retrying');
      metrics?.processingRetries.inc();
      if (!(await waitAlive(payload, backoff(attempt - 1)))) throw ABANDONED;
      try {
        return processMessage(topic, partition, route, message, chunk);
      } catch (err) {
        error = err;
      }
    }
    const detail = error instanceof Error ? error.message : String(error);
    return { code: 'PROCESSING_FAILED', message: `processing threw ${maxRetries + 1} times; last error: ${detail}` };
  }

  async function buildChunk(payload: EachBatchPayload, route: Route, start: number, end: number): Promise<Chunk> {
    const { topic, partition, messages } = payload.batch;
    const chunk: Chunk = { channels: [], bodies: [], offsets: [], deadLetters: [] };
    // Deliberately imperative: this loop runs once per event; the await is only on the rare throw path.
    for (let i = start; i < end; i++) {
      const message = messages[i] as KafkaMessage;
      let reason: DeadLetterReason | undefined;
      try {
        reason = processMessage(topic, partition, route, message, chunk);
      } catch (err) {
        reason = await retryPoison(topic, partition, route, message, chunk, err, payload);
      }
      if (reason !== undefined) {
        chunk.deadLetters.push(createDeadLetter(topic, partition, message, reason));
        logDeadLetter(topic, partition, message.offset, reason);
      }
    }
    return chunk;
  }

  // ---- per chunk --------------------------------------------------------------------------

  /**
   * One pipeline per chunk: SADD of the partition once, then per event its history XADD before
   * its PUBLISH, so a gateway that saw the live event always finds it in history too.
   * Throws unless Redis acknowledged every command.
   */
  async function publishChunk(topic: string, partition: number, chunk: Chunk): Promise<void> {
    const pipeline = redis.pipeline();
    const history = historyLength > 0;
    const streamKey = historyStreamKey(historyPrefix, topic, partition);
    if (history) pipeline.sadd(historyPartitionsKey(historyPrefix, topic), partition);
    const { channels, bodies, offsets } = chunk;
    for (let i = 0; i < channels.length; i++) {
      const channel = channels[i] as string;
      const body = bodies[i] as Buffer;
      if (history) {
        pipeline.xadd(streamKey, 'MAXLEN', '~', historyMaxLen, historyEntryId(offsets[i] as string), HISTORY_FIELD_CHANNEL, channel, HISTORY_FIELD_ENVELOPE, body);
      }
      pipeline.publish(channel, body);
    }
    const started = performance.now();
    const results = await answeredWithin(pipeline.exec(), `the pipeline for ${topic}[${partition}]`);
    metrics?.redisPublishSeconds.observe((performance.now() - started) / 1_000);
    if (!results) throw new Error(`Redis discarded the pipeline for ${topic}[${partition}]`);
    for (const [err] of results) {
      // An XADD at or below the stream's top: this event is already in history (a re-publish after
      // a crash or a rebalance). Its PUBLISH still went out; the gateway drops the duplicate position.
      if (err !== null && !err.message.includes(HISTORY_ALREADY_STORED)) {
        throw new Error(`Redis rejected a command for ${topic}[${partition}]: ${err.message}`, { cause: err });
      }
    }
  }

  /**
   * Dead letters first, then the pipeline; retried until both are acknowledged (consumption
   * paused meanwhile). Returns false when the batch was given up uncommitted (stop, rebalance).
   */
  async function deliverChunk(payload: EachBatchPayload, chunk: Chunk): Promise<boolean> {
    const { topic, partition } = payload.batch;
    const series = metrics?.forTopic(topic);
    let deadLettersSent = chunk.deadLetters.length === 0;
    let published = chunk.channels.length === 0;
    for (let attempt = 0; ; attempt++) {
      try {
        if (!deadLettersSent) {
          await (producer as Producer).send({ topic: topic + dlqSuffix, acks: -1, messages: chunk.deadLetters });
          deadLettersSent = true;
          stats.deadLettered += chunk.deadLetters.length;
          series?.deadLettered.inc(chunk.deadLetters.length);
        }
        if (!published) {
          await publishChunk(topic, partition, chunk);
          published = true;
          stats.published += chunk.channels.length;
          series?.published.inc(chunk.channels.length);
        }
        if (attempt > 0) resume();
        return true;
      } catch (err) {
        const kind: PauseKind = deadLettersSent ? 'redis unavailable' : 'dead-letter topic unavailable';
        if (attempt === 0) logger.warn({ err, topic, partition }, `could not deliver a chunk (${kind}); retrying`);
        pause(kind);
        waitingBatches++;
        try {
          if (!(await waitAlive(payload, backoff(attempt), true))) return false;
        } finally {
          waitingBatches--;
        }
      }
    }
  }

  /**
   * Waits `ms` (and, with `untilRedis`, until Redis is connected) while heartbeating, so the group
   * keeps this member. Returns false when the batch must be given up: a rebalance took the
   * partition, or stop() was called and its grace is over. A heartbeat that reports a rebalance
   * throws, which kafkajs handles by re-joining; the uncommitted chunk is then redone.
   */
  async function waitAlive(payload: EachBatchPayload, ms: number, untilRedis = false): Promise<boolean> {
    const until = Date.now() + ms;
    for (;;) {
      if (!payload.isRunning() && !stopped) return false;
      if (payload.isStale()) return false;
      if (stopped && Date.now() >= stopDeadline) return false;
      if (Date.now() >= until && (!untilRedis || redis.status === 'ready')) return true;
      await sleep(Math.max(1, Math.min(WAIT_STEP_MS, until - Date.now())));
      await payload.heartbeat();
    }
  }

  /**
   * Rejects when Redis holds `reply` longer than redisTimeoutMs. The connection is then dropped
   * and re-made: its queued commands fail instead of piling up behind a Redis that does not answer.
   */
  async function answeredWithin<T>(reply: Promise<T>, what: string): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        redis.disconnect(true);
        reject(new Error(`Redis did not answer ${what} within ${redisTimeoutMs} ms; reconnecting`));
      }, redisTimeoutMs);
    });
    // A reply that fails after the timeout won has nobody waiting for it.
    reply.catch(() => undefined);
    try {
      return await Promise.race([reply, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  function backoff(attempt: number): number {
    return Math.min(retryBackoffMs * 2 ** Math.min(attempt, 16), MAX_BACKOFF_MS);
  }

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
      let chunk: Chunk;
      try {
        chunk = await buildChunk(payload, route, start, end);
      } catch (err) {
        if (err === ABANDONED) return;
        throw err;
      }
      stats.consumed += end - start;
      series?.consumed.inc(end - start);

      // Dead letters and publishes must both be acknowledged before the commit: at-least-once.
      if (!(await deliverChunk(payload, chunk))) {
        logger.warn({ topic, partition, from: messages[start]?.offset }, 'gave up an undelivered chunk uncommitted; the next owner redoes it');
        return;
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
    isReady: () => joined && redis.status === 'ready' && pausedFor === undefined,
    notReadyReason: () =>
      stopped
        ? 'stopping'
        : !joined
          ? 'not in the consumer group yet'
          : pausedFor !== undefined
            ? `consumption paused: ${pausedFor}`
            : `redis ${redis.status}`,

    async start() {
      redis.on('ready', onRedisReady);
      if (redis.status === 'ready') await ensureEpoch();
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
      logger.info({ topics: schema.topics, groupId, historyLength }, 'ingest consuming');
    },

    async stop() {
      joined = false;
      stopped = true;
      stopDeadline = Date.now() + stopGraceMs;
      clearInterval(pauseProbe);
      redis.off('ready', onRedisReady);
      // consumer.disconnect() waits for the batch in flight, so its commit is not lost; a batch
      // waiting for Redis gives up after stopGraceMs (see waitAlive), which bounds this.
      await consumer?.disconnect();
      await producer?.disconnect();
      logger.info({ ...stats }, 'ingest stopped');
    },
  };
}
