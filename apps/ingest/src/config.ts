import { booleanFlag, csvList, defineConfigSpec, durationMs, envVar, hostPort, integer, port, url, z } from '@wirestream/config';
import { kafkaSecuritySpec, redisSecuritySpec } from '@wirestream/connect';
import { keyStyleSpec, schemaSourceSpec } from '@wirestream/registry';
import { REDIS_MODES } from '@wirestream/wire';
import { LOG_LEVELS, tracingSpec } from '@wirestream/telemetry';
import { INGEST_DEFAULTS } from './defaults.js';

/** Every setting of ingest, read once from the environment by `main.ts`. Defaults: {@link INGEST_DEFAULTS}. */
export const ingestConfigSpec = defineConfigSpec({
  kafkaBrokers: envVar({ name: 'KAFKA_BROKERS', schema: csvList(hostPort()), default: [...INGEST_DEFAULTS.kafkaBrokers], description: 'Kafka bootstrap brokers, comma-separated host:port.' }),
  ...kafkaSecuritySpec,
  kafkaClientId: envVar({ name: 'KAFKA_CLIENT_ID', schema: z.string().trim().min(1), default: INGEST_DEFAULTS.kafkaClientId, description: 'Kafka client id (shows in broker logs and quotas).' }),
  groupId: envVar({ name: 'KAFKA_GROUP_ID', schema: z.string().trim().min(1), default: INGEST_DEFAULTS.groupId, description: 'Consumer group shared by all ingest replicas.' }),
  redisUrl: envVar({ name: 'REDIS_URL', schema: url({ protocols: ['redis', 'rediss'] }), default: INGEST_DEFAULTS.redisUrl, description: 'Redis that ingest publishes to; in cluster mode any one node (the others are discovered; its user, password and rediss:// TLS apply to all).' }),
  redisMode: envVar({ name: 'REDIS_MODE', schema: z.enum(REDIS_MODES), default: INGEST_DEFAULTS.redisMode, description: 'standalone, or cluster: Redis Cluster with sharded pub/sub (SPUBLISH) and per-partition hash tags; must match the gateway.' }),
  ...redisSecuritySpec,
  redisWaitReplicas: envVar({ name: 'INGEST_REDIS_WAIT_REPLICAS', schema: integer({ min: 0, max: 100 }), default: INGEST_DEFAULTS.redisWaitReplicas, description: "Replicas each chunk's history must reach (WAIT) before its events are published, so a primary's crash loses no history; 0 does not wait." }),
  redisWaitTimeoutMs: envVar({ name: 'INGEST_REDIS_WAIT_TIMEOUT_MS', schema: durationMs({ minMs: 1, maxMs: 5_000 }), default: INGEST_DEFAULTS.redisWaitTimeoutMs, description: 'Longest one WAIT holds a chunk; fewer replicas by then is counted and logged, and the chunk is still published.' }),
  channelPrefix: envVar({ name: 'REDIS_CHANNEL_PREFIX', schema: z.string().trim().regex(/^[A-Za-z0-9_.-]+$/), default: INGEST_DEFAULTS.channelPrefix, description: 'Prefix of Redis channels; must match the gateway.' }),
  schemaPath: envVar({ name: 'SCHEMA_PATH', schema: z.string().trim().min(1), optional: true, description: 'GraphQL SDL file: your payload types and `type Subscription` fields bound by @topic; @topic and Query are added if absent, every binding is checked at start (docs/schema.md). Default: the example auction schema.' }),
  dlqSuffix: envVar({ name: 'INGEST_DLQ_SUFFIX', schema: z.string().trim().regex(/^[A-Za-z0-9._-]+$/), default: INGEST_DEFAULTS.dlqSuffix, description: 'Dead letters of topic T go to T + this suffix.' }),
  createTopics: envVar({ name: 'INGEST_CREATE_TOPICS', schema: booleanFlag(), default: INGEST_DEFAULTS.createTopics, description: 'Create the source topics the schema names that do not exist (partitions INGEST_TOPIC_PARTITIONS); off: ingest waits for them, naming each missing one. Dead-letter topics are always created.' }),
  topicPartitions: envVar({ name: 'INGEST_TOPIC_PARTITIONS', schema: integer({ min: 1, max: 100_000 }), optional: true, description: "Partitions of a source topic ingest creates (INGEST_CREATE_TOPICS). Default: the broker's num.partitions." }),
  topicReplication: envVar({ name: 'INGEST_TOPIC_REPLICATION', schema: integer({ min: 1, max: 32 }), optional: true, description: "Replication factor of the topics ingest creates (source topics with INGEST_CREATE_TOPICS, and dead-letter topics); at most the number of brokers. Default: the broker's default.replication.factor." }),
  maxMessageBytes: envVar({ name: 'INGEST_MAX_MESSAGE_BYTES', schema: integer({ min: 1_024, max: 104_857_600 }), default: INGEST_DEFAULTS.maxMessageBytes, description: 'Larger Kafka values are dead-lettered unparsed.' }),
  ...keyStyleSpec,
  maxDepth: envVar({ name: 'INGEST_MAX_DEPTH', schema: integer({ min: 1, max: 1_000 }), default: INGEST_DEFAULTS.maxDepth, description: 'Deepest nesting of a payload (the root object is 1); deeper events are dead-lettered.' }),
  publishChunkSize: envVar({ name: 'INGEST_PUBLISH_CHUNK', schema: integer({ min: 1, max: 100_000 }), default: INGEST_DEFAULTS.publishChunkSize, description: 'Messages per Redis pipeline and per offset commit.' }),
  partitionsConcurrently: envVar({ name: 'INGEST_PARTITIONS_CONCURRENTLY', schema: integer({ min: 1, max: 1_000 }), default: INGEST_DEFAULTS.partitionsConcurrently, description: 'Partitions one replica processes at once.' }),
  fetchMaxWaitMs: envVar({ name: 'INGEST_FETCH_MAX_WAIT_MS', schema: integer({ min: 10, max: 60_000 }), default: INGEST_DEFAULTS.fetchMaxWaitMs, description: 'Longest a Kafka fetch waits for data (also bounds shutdown time).' }),
  fetchMaxBytesPerPartition: envVar({ name: 'INGEST_FETCH_MAX_BYTES_PER_PARTITION', schema: integer({ min: 1_024, max: 1_073_741_824 }), default: INGEST_DEFAULTS.fetchMaxBytesPerPartition, description: "Most bytes of one partition a Kafka fetch returns (Kafka's max.partition.fetch.bytes); larger fetches cost less CPU per event and more memory." }),
  fetchMaxBytes: envVar({ name: 'INGEST_FETCH_MAX_BYTES', schema: integer({ min: 1_024, max: 1_073_741_824 }), default: INGEST_DEFAULTS.fetchMaxBytes, description: "Most bytes one Kafka fetch response holds over all partitions (Kafka's fetch.max.bytes): bounds the memory one fetch takes." }),
  historyLength: envVar({ name: 'INGEST_HISTORY_LENGTH', schema: integer({ min: 0, max: 10_000_000 }), default: INGEST_DEFAULTS.historyLength, description: 'History kept per partition (Redis Stream) for resume and back-fill: about this many offsets (batch form, MINID ~) or entries (event form, MAXLEN ~); 0 writes no history.' }),
  historyPrefix: envVar({ name: 'REDIS_HISTORY_PREFIX', schema: z.string().trim().regex(/^[A-Za-z0-9_.-]+$/), default: INGEST_DEFAULTS.historyPrefix, description: 'Prefix of the Redis history keys; must match the gateway.' }),
  maxRetries: envVar({ name: 'INGEST_MAX_RETRIES', schema: integer({ min: 0, max: 100 }), default: INGEST_DEFAULTS.maxRetries, description: 'Re-runs of a message whose processing throws before it is dead-lettered.' }),
  fromBeginning: envVar({ name: 'INGEST_FROM_BEGINNING', schema: booleanFlag(), default: INGEST_DEFAULTS.fromBeginning, description: 'A new consumer group starts at the earliest offset.' }),
  httpHost: envVar({ name: 'INGEST_HTTP_HOST', schema: z.string().trim().min(1), default: INGEST_DEFAULTS.httpHost, description: 'Address of the health/metrics server.' }),
  httpPort: envVar({ name: 'INGEST_HTTP_PORT', schema: port(), default: INGEST_DEFAULTS.httpPort, description: 'Port of GET /healthz, /readyz and /metrics (0 picks a free one).' }),
  logLevel: envVar({ name: 'LOG_LEVEL', schema: z.enum(LOG_LEVELS), default: INGEST_DEFAULTS.logLevel, description: 'Lowest log level written (pino).' }),
  // OpenTelemetry (issue #19, decision 0020): the spec's OTEL_* names; off unless OTEL_TRACES_EXPORTER=otlp.
  ...tracingSpec,

  // --- Schema Registry / schema directory (issue #14): topics whose @topic(format:) is AVRO … ---
  ...schemaSourceSpec,
  // --- end of the schema-source block ---
});
