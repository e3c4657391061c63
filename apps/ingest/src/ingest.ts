import { Partitioners, type Kafka } from 'kafkajs';
import type { SchemaDecoders } from '@wirestream/registry';
import type { Logger, Tracer } from '@wirestream/telemetry';
import type { WirestreamSchema } from '@wirestream/schema';
import { createRedisLayout, REDIS_MODES, type RedisMode } from '@wirestream/wire';
import { createBatchProcessor, type BatchProcessor } from './batch-processor.js';
import { createChunkBuilder } from './chunk-builder.js';
import { createChunkTracer } from './chunk-tracing.js';
import { INGEST_DEFAULTS } from './defaults.js';
import { createEventConverter, type EventConverter } from './event-converter.js';
import { createFlowControl, type FlowControl } from './flow-control.js';
import { createIngestState, type IngestState, type IngestStats } from './ingest-state.js';
import type { IngestMetrics } from './metrics.js';
import { startLagMonitor } from './lag-monitor.js';
import { createOffsetGapWatch, type OffsetGapWatch } from './offset-gaps.js';
import { prepareTopics, type NewTopicSettings } from './prepare-topics.js';
import type { IngestRedis } from './redis-client.js';
import { createRedisPublisher } from './redis-publisher.js';
import { createSchemaGate } from './schema-gate.js';
import { createTopicRoutes } from './topic-routes.js';

/** What ingest needs from the outside world; `main.ts` builds the real ones, tests pass their own. */
export interface IngestDeps {
  /** kafkajs client; ingest creates its own consumer, producer (dead letters) and admin from it. */
  readonly kafka: Kafka;
  /**
   * ioredis connection used for publishing (not in subscriber mode): a `Redis`, or a `Cluster`
   * when `redisMode` is `'cluster'`. Build it with `createIngestRedis` (as main.ts does): ingest
   * retries a chunk itself, so the client must fail fast (no offline queue, 0 retries per request);
   * a command parked in ioredis's queue would block that and `stop()`.
   */
  readonly redis: IngestRedis;
  readonly schema: WirestreamSchema;
  readonly logger: Logger;
  /** Prometheus series; optional so tests and tools can run without a registry. */
  readonly metrics?: IngestMetrics;
  /**
   * The per-message conversion. Tests pass one that throws to exercise poison-message handling.
   * @default createEventConverter({ maxMessageBytes })
   */
  readonly convert?: EventConverter;
  /**
   * Compiled schemas by id (`createSchemaDecoders` over a Schema Registry or a schema directory),
   * shared by all partitions; required when a topic's `@topic(format:)` or `keyFormat:` is a
   * registry format (AVRO). @default undefined (JSON topics only)
   */
  readonly schemaDecoders?: SchemaDecoders;
  /**
   * Called when the consumer crashes (kafkajs then restarts it), with whether it ever joined its
   * group: main.ts turns a crash that settings alone can fix (an ACL missing from the start) into exit 78.
   */
  readonly onConsumerCrash?: (err: unknown, everJoined: boolean) => void;
  /**
   * OpenTelemetry tracer (`startTracing` in @wirestream/telemetry): spans per chunk, and per record
   * that carries a sampled traceparent (decision 0020). @default undefined (no tracing, no cost)
   */
  readonly tracer?: Tracer;
}

/** Every default is in {@link INGEST_DEFAULTS}. */
export interface IngestOptions {
  /** Kafka consumer group shared by all ingest replicas. @default INGEST_DEFAULTS.groupId */
  readonly groupId?: string;
  /** Prefix of the Redis channels (must match the gateway's). @default INGEST_DEFAULTS.channelPrefix */
  readonly channelPrefix?: string;
  /** Dead letters of topic `t` go to `t + dlqSuffix`. @default INGEST_DEFAULTS.dlqSuffix */
  readonly dlqSuffix?: string;
  /** Larger messages are dead-lettered, not parsed. @default INGEST_DEFAULTS.maxMessageBytes */
  readonly maxMessageBytes?: number;
  /** Create the schema's source topics that do not exist instead of waiting for them. @default INGEST_DEFAULTS.createTopics */
  readonly createTopics?: boolean;
  /** Partitions and replication of the topics ingest creates. @default the broker's defaults */
  readonly newTopics?: NewTopicSettings;
  /** Messages per Redis pipeline, and so per offset commit. @default INGEST_DEFAULTS.publishChunkSize */
  readonly publishChunkSize?: number;
  /** Partitions processed concurrently by one replica. @default INGEST_DEFAULTS.partitionsConcurrently */
  readonly partitionsConcurrently?: number;
  /** A new consumer group starts at the earliest offset so nothing already in Kafka is skipped. @default INGEST_DEFAULTS.fromBeginning */
  readonly fromBeginning?: boolean;
  /**
   * Longest a fetch waits for data. Also bounds how long `stop()` waits for an idle fetch
   * (kafkajs's own default is 5 s). @default INGEST_DEFAULTS.fetchMaxWaitMs
   */
  readonly fetchMaxWaitMs?: number;
  /** Most bytes of one partition in a fetch response (kafkajs `maxBytesPerPartition`). @default INGEST_DEFAULTS.fetchMaxBytesPerPartition */
  readonly fetchMaxBytesPerPartition?: number;
  /** Most bytes of a whole fetch response (kafkajs `maxBytes`). @default INGEST_DEFAULTS.fetchMaxBytes */
  readonly fetchMaxBytes?: number;
  /**
   * History kept per partition stream: about this many offsets (one entry per chunk holding its
   * events, `XADD … MINID ~`); 0 writes no history. @default INGEST_DEFAULTS.historyLength
   */
  readonly historyLength?: number;
  /** Prefix of the history keys (must match the gateway's). @default INGEST_DEFAULTS.historyPrefix */
  readonly historyPrefix?: string;
  /**
   * `'cluster'`: Redis Cluster layout (decision 0005): a partition's stream and channels share one
   * hash tag, events go out with SPUBLISH, and ingest keeps each topic's partition count for the
   * gateways. `deps.redis` must then be a `Cluster`. Must match the gateway's. @default INGEST_DEFAULTS.redisMode
   */
  readonly redisMode?: RedisMode;
  /**
   * Replicas each chunk's history must reach before its events are published: a `WAIT` between
   * the XADDs and the publishes. Redis replicates asynchronously, so without it a primary killed
   * right after acknowledging a chunk can lose history entries whose offsets are already committed.
   * 0 sends no WAIT. Needs history (`historyLength` > 0). @default INGEST_DEFAULTS.redisWaitReplicas
   */
  readonly redisWaitReplicas?: number;
  /**
   * Longest one WAIT holds its chunk; fewer replicas by then is counted
   * (`wirestream_ingest_redis_wait_short_total`) and logged, and the chunk is still published.
   * Must be below `redisTimeoutMs`. @default INGEST_DEFAULTS.redisWaitTimeoutMs
   */
  readonly redisWaitTimeoutMs?: number;
  /** Re-runs of a message whose processing throws before it is dead-lettered. @default INGEST_DEFAULTS.maxRetries */
  readonly maxRetries?: number;
  /** First pause before a retry (of a poison message or an undeliverable chunk); doubles up to 2 s. @default INGEST_DEFAULTS.retryBackoffMs */
  readonly retryBackoffMs?: number;
  /**
   * A chunk's pipeline not answered within this is treated as Redis being down: the connection
   * is dropped (failing what it still holds) and the chunk redone once Redis is back. One timer
   * per chunk, not ioredis's `commandTimeout` (a timer per command, two per event). @default INGEST_DEFAULTS.redisTimeoutMs
   */
  readonly redisTimeoutMs?: number;
  /**
   * How long a batch waiting for Redis (or the dead-letter topic) may keep `stop()` waiting
   * before it is abandoned uncommitted, for the next owner to redo. @default INGEST_DEFAULTS.stopGraceMs
   */
  readonly stopGraceMs?: number;
}

export type { IngestStats } from './ingest-state.js';

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

/**
 * Builds the ingest pipeline: Kafka topics named by the schema → snake_case → Redis envelopes.
 * Wires the parts (one message's trip: batch-processor → chunk-builder → event-converter →
 * redis-publisher, then the commit) over one shared {@link IngestState}, and owns the lifecycle.
 */
export function createIngest(deps: IngestDeps, options: IngestOptions = {}): Ingest {
  const { kafka, redis, schema, logger, metrics } = deps;
  const {
    groupId = INGEST_DEFAULTS.groupId,
    channelPrefix = INGEST_DEFAULTS.channelPrefix,
    dlqSuffix = INGEST_DEFAULTS.dlqSuffix,
    maxMessageBytes = INGEST_DEFAULTS.maxMessageBytes,
    createTopics = INGEST_DEFAULTS.createTopics,
    newTopics = {},
    publishChunkSize = INGEST_DEFAULTS.publishChunkSize,
    partitionsConcurrently = INGEST_DEFAULTS.partitionsConcurrently,
    fromBeginning = INGEST_DEFAULTS.fromBeginning,
    fetchMaxWaitMs = INGEST_DEFAULTS.fetchMaxWaitMs,
    fetchMaxBytesPerPartition = INGEST_DEFAULTS.fetchMaxBytesPerPartition,
    fetchMaxBytes = INGEST_DEFAULTS.fetchMaxBytes,
    historyLength = INGEST_DEFAULTS.historyLength,
    historyPrefix = INGEST_DEFAULTS.historyPrefix,
    redisMode = INGEST_DEFAULTS.redisMode,
    redisWaitReplicas = INGEST_DEFAULTS.redisWaitReplicas,
    redisWaitTimeoutMs = INGEST_DEFAULTS.redisWaitTimeoutMs,
    maxRetries = INGEST_DEFAULTS.maxRetries,
    retryBackoffMs = INGEST_DEFAULTS.retryBackoffMs,
    stopGraceMs = INGEST_DEFAULTS.stopGraceMs,
    redisTimeoutMs = INGEST_DEFAULTS.redisTimeoutMs,
  } = options;
  validateOptions(schema, { publishChunkSize, historyLength, maxRetries, dlqSuffix });
  for (const [name, setting, value] of [['fetchMaxBytesPerPartition', 'INGEST_FETCH_MAX_BYTES_PER_PARTITION', fetchMaxBytesPerPartition], ['fetchMaxBytes', 'INGEST_FETCH_MAX_BYTES', fetchMaxBytes]] as const) {
    if (!Number.isInteger(value) || value < 1) throw new RangeError(`${name} (${setting}) must be a positive integer of bytes, got ${value}`);
  }
  validateRedisOptions(redis, { redisMode, redisWaitReplicas, redisWaitTimeoutMs, redisTimeoutMs, historyLength });

  const state = createIngestState();
  let lagMonitor: { stop(): Promise<void> } | undefined;
  const flow = createFlowControl({ state, redis, topics: schema.topics, logger, metrics });
  const layout = createRedisLayout(redisMode, channelPrefix, historyPrefix);
  const convert = deps.convert ?? createEventConverter({ maxMessageBytes });
  // JSON_SCHEMA bodies, once validated, go through the JSON topics' converter.
  const routes = createTopicRoutes(schema, deps.schemaDecoders, maxMessageBytes, convert);
  const publisher = createRedisPublisher({
    redis,
    layout,
    shards: new Map([...routes].map(([topic, route]) => [topic, route.shards])),
    snapshotTopics: new Set([...routes].filter(([, route]) => route.snapshot).map(([topic]) => topic)),
    logger,
    metrics,
    historyLength,
    redisTimeoutMs,
    waitReplicas: redisWaitReplicas,
    waitTimeoutMs: redisWaitTimeoutMs,
  });
  const gaps = createOffsetGapWatch({ kafka, groupId, topics: schema.topics, logger, metrics });
  const schemaGate = createSchemaGate({ state, logger, retryBackoffMs });
  const chunks = createChunkBuilder({ convert, schemaGate, maxRetries, retryBackoffMs, flow, logger, metrics });
  const batches = createBatchProcessor({
    state,
    routes,
    chunks,
    schemaGate,
    publisher,
    flow,
    logger,
    metrics,
    publishChunkSize,
    dlqSuffix,
    retryBackoffMs,
    tracer: deps.tracer === undefined ? undefined : createChunkTracer(deps.tracer, groupId),
    gaps,
  });

  return {
    stats: state.stats,
    isReady: () => state.joined && redis.status === 'ready' && flow.pausedFor() === undefined,
    notReadyReason: () => notReadyReason(state, flow, redis),

    async start() {
      await publisher.start();
      const { partitionCounts, deadLetterLimits } = await prepareTopics({
        kafka,
        topics: schema.topics,
        dlqSuffix,
        logger,
        isStopped: () => state.stopped,
        fetchPartitionCounts: redisMode === 'cluster',
        maxMessageBytes,
        createSourceTopics: createTopics,
        newTopics,
      });
      state.deadLetterLimits = deadLetterLimits;
      // Before the first SPUBLISH, so gateways can subscribe every partition's channels.
      await publisher.raisePartitionCounts(partitionCounts);
      // The Java-compatible murmur2 partitioner: dead letters of one key land together, like any Kafka client's.
      state.producer = kafka.producer({ allowAutoTopicCreation: true, createPartitioner: Partitioners.DefaultPartitioner });
      await state.producer.connect();
      await startConsumer(kafka, state, batches, gaps, logger, { groupId, fetchMaxWaitMs, fetchMaxBytesPerPartition, fetchMaxBytes, partitionsConcurrently, fromBeginning, topics: schema.topics, onCrash: deps.onConsumerCrash });
      if (metrics) lagMonitor = startLagMonitor({ kafka, groupId, topics: schema.topics, metrics, logger, intervalMs: LAG_POLL_MS });
      logger.info({ topics: schema.topics, groupId, historyLength, redisMode, redisWaitReplicas }, 'ingest consuming');
    },

    async stop() {
      state.joined = false;
      state.stopped = true;
      state.stopDeadline = Date.now() + stopGraceMs;
      flow.close();
      schemaGate.close();
      publisher.stop();
      await lagMonitor?.stop();
      // consumer.disconnect() waits for the batch in flight, so its commit is not lost; a batch
      // waiting for Redis gives up after stopGraceMs (see flow-control's waitAlive), which bounds this.
      await state.consumer?.disconnect();
      await state.producer?.disconnect();
      await gaps.stop();
      logger.info({ ...state.stats }, 'ingest stopped');
    },
  };
}

/** How often consumer lag is read from the broker (committed offsets vs high watermarks). */
const LAG_POLL_MS = 5_000; // 5 seconds

/** Kafka's longest topic name (kafka.common.internals.Topic). */
const KAFKA_TOPIC_NAME_MAX = 249;

/** Contradictory or impossible options fail here, at construction, with the rule they break. */
function validateOptions(
  schema: WirestreamSchema,
  { publishChunkSize, historyLength, maxRetries, dlqSuffix }: { publishChunkSize: number; historyLength: number; maxRetries: number; dlqSuffix: string },
): void {
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
  const tooLong = schema.topics.filter((t) => t.length + dlqSuffix.length > KAFKA_TOPIC_NAME_MAX);
  if (tooLong.length > 0) {
    throw new RangeError(
      `the dead-letter topic of ${tooLong.map((t) => `"${t}"`).join(', ')} would be longer than Kafka's ${KAFKA_TOPIC_NAME_MAX} characters (topic + dlqSuffix (INGEST_DLQ_SUFFIX) "${dlqSuffix}"): shorten the suffix or the topic name`,
    );
  }
}

interface RedisSettings {
  readonly redisMode: RedisMode;
  readonly redisWaitReplicas: number;
  readonly redisWaitTimeoutMs: number;
  readonly redisTimeoutMs: number;
  readonly historyLength: number;
}

/** The Redis options and the client must agree; each error names the option and its setting (main.ts's variable). */
function validateRedisOptions(redis: IngestRedis, { redisMode, redisWaitReplicas, redisWaitTimeoutMs, redisTimeoutMs, historyLength }: RedisSettings): void {
  if (!REDIS_MODES.includes(redisMode)) {
    throw new RangeError(`redisMode (REDIS_MODE) must be one of ${REDIS_MODES.join(', ')}, got ${JSON.stringify(redisMode)}`);
  }
  if ((redisMode === 'cluster') !== redis.isCluster) {
    throw new TypeError(
      redisMode === 'cluster'
        ? 'redisMode (REDIS_MODE) is cluster, but deps.redis is a standalone Redis client: pass an ioredis Cluster (createIngestRedis with mode cluster)'
        : 'redisMode (REDIS_MODE) is standalone, but deps.redis is an ioredis Cluster: set redisMode to cluster, or pass a standalone Redis client',
    );
  }
  if (!Number.isInteger(redisWaitReplicas) || redisWaitReplicas < 0) {
    throw new RangeError(`redisWaitReplicas (INGEST_REDIS_WAIT_REPLICAS) must be an integer >= 0 (0 sends no WAIT), got ${redisWaitReplicas}`);
  }
  if (redisWaitReplicas > 0 && historyLength === 0) {
    throw new RangeError(
      `redisWaitReplicas (INGEST_REDIS_WAIT_REPLICAS) is ${redisWaitReplicas} but historyLength (INGEST_HISTORY_LENGTH) is 0: WAIT makes history survive a primary's crash, and there is no history to protect; set one of them differently`,
    );
  }
  // WAIT 0 would block forever; a WAIT as long as the chunk's own timeout would drop the connection every time a replica is late.
  if (redisWaitReplicas > 0 && (!Number.isInteger(redisWaitTimeoutMs) || redisWaitTimeoutMs < 1 || redisWaitTimeoutMs >= redisTimeoutMs)) {
    throw new RangeError(
      `redisWaitTimeoutMs (INGEST_REDIS_WAIT_TIMEOUT_MS) must be an integer from 1 to below redisTimeoutMs (${redisTimeoutMs} ms, the chunk's whole Redis timeout), got ${redisWaitTimeoutMs}`,
    );
  }
}

interface ConsumerSettings {
  readonly groupId: string;
  readonly fetchMaxWaitMs: number;
  readonly fetchMaxBytesPerPartition: number;
  readonly fetchMaxBytes: number;
  readonly partitionsConcurrently: number;
  readonly fromBeginning: boolean;
  readonly topics: readonly string[];
  readonly onCrash: ((err: unknown, everJoined: boolean) => void) | undefined;
}

/** Joins the group and hands every batch to the batch processor; offsets are committed by it, after Redis acknowledged. */
async function startConsumer(kafka: Kafka, state: IngestState, batches: BatchProcessor, gaps: OffsetGapWatch, logger: Logger, settings: ConsumerSettings): Promise<void> {
  const { groupId, fetchMaxWaitMs, fetchMaxBytesPerPartition, fetchMaxBytes, partitionsConcurrently, fromBeginning, topics, onCrash } = settings;
  let everJoined = false;
  const consumer = kafka.consumer({ groupId, allowAutoTopicCreation: true, maxWaitTimeInMs: fetchMaxWaitMs, maxBytesPerPartition: fetchMaxBytesPerPartition, maxBytes: fetchMaxBytes });
  state.consumer = consumer;
  consumer.on(consumer.events.GROUP_JOIN, (e) => {
    state.joined = true;
    everJoined = true;
    gaps.joined(e.payload.memberAssignment);
    logger.info({ groupId, memberId: e.payload.memberId, assignment: e.payload.memberAssignment }, 'joined consumer group');
  });
  consumer.on(consumer.events.CRASH, (e) => {
    state.joined = false;
    logger.error({ err: e.payload.error, restart: e.payload.restart }, 'consumer crashed');
    onCrash?.(e.payload.error, everJoined);
  });
  // A batch of only transaction markers never reaches eachBatch: kafkajs resolves it itself.
  consumer.on(consumer.events.START_BATCH_PROCESS, ({ payload }) => {
    if (payload.batchSize === 0) gaps.committed(payload.topic, payload.partition, BigInt(payload.lastOffset) + 1n);
  });
  await consumer.connect();
  await consumer.subscribe({ topics: [...topics], fromBeginning });
  // Before the first fetch: a restarted ingest whose next offsets were deleted meanwhile knows where it stood.
  await gaps.start();
  await consumer.run({
    autoCommit: false,
    eachBatchAutoResolve: false,
    partitionsConsumedConcurrently: partitionsConcurrently,
    eachBatch: batches.handleBatch,
  });
}

function notReadyReason(state: IngestState, flow: FlowControl, redis: IngestRedis): string {
  const pausedFor = flow.pausedFor();
  if (state.stopped) return 'stopping';
  if (!state.joined) return 'not in the consumer group yet';
  if (pausedFor !== undefined) return `consumption paused: ${pausedFor}`;
  return `redis ${redis.status}`;
}
