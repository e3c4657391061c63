import { DEFAULT_CHANNEL_PREFIX, DEFAULT_HISTORY_PREFIX } from '@wirestream/wire';

/**
 * The default of every ingest setting, written once. The config spec (`config.ts`, and so the
 * README's configuration table), `createIngest`'s options, `createEventConverter`'s options and
 * the TSDoc `@default` tags all read it from here. Units are in the names or beside the values.
 */
export const INGEST_DEFAULTS = Object.freeze({
  // ---- connections and process (main.ts) ----
  kafkaBrokers: Object.freeze(['127.0.0.1:9092']),
  kafkaClientId: 'wirestream-ingest',
  redisUrl: 'redis://127.0.0.1:6379',
  /** `standalone` or `cluster` (Redis Cluster, sharded pub/sub; decision 0005). Must match the gateway's. */
  redisMode: 'standalone',
  httpHost: '0.0.0.0',
  httpPort: 9464,
  logLevel: 'info',

  // ---- createIngest ----
  groupId: 'wirestream-ingest',
  /** Must match the gateway's. */
  channelPrefix: DEFAULT_CHANNEL_PREFIX,
  dlqSuffix: '.dlq',
  /** Source topics are their producers': ingest waits for them unless told to create them (INGEST_CREATE_TOPICS). */
  createTopics: false,
  maxMessageBytes: 1_048_576, // 1 MiB
  /** Messages per Redis pipeline, and so per offset commit. */
  publishChunkSize: 500,
  partitionsConcurrently: 3,
  fromBeginning: true,
  fetchMaxWaitMs: 1_000, // 1 second (kafkajs's own default is 5 s)
  /**
   * Largest slice of one partition in a fetch response, and of the whole response. Twice kafkajs's
   * 1 MiB per partition: fewer, larger fetches took 0.2–2.6 µs of CPU off each event in bench/ingest
   * (decision 0026) for ~50–65 MiB more peak RSS; the whole response stays bounded at 25 MiB (kafkajs: 10 MiB).
   */
  fetchMaxBytesPerPartition: 2_097_152, // 2 MiB
  fetchMaxBytes: 26_214_400, // 25 MiB
  /** Offsets (batch form) or entries (event form) kept per partition stream; 0 writes no history. */
  historyLength: 10_000,
  /** Must match the gateway's. */
  historyPrefix: DEFAULT_HISTORY_PREFIX,
  maxRetries: 3,
  retryBackoffMs: 100, // doubles per attempt up to 2 s
  redisTimeoutMs: 10_000, // 10 seconds, far above a 500-envelope pipeline's few milliseconds
  /** Replicas a chunk's history must reach (Redis WAIT) before its events are published; 0 does not wait. */
  redisWaitReplicas: 0,
  redisWaitTimeoutMs: 1_000, // 1 second: how long one chunk's WAIT may hold it; well below redisTimeoutMs
  stopGraceMs: 5_000, // 5 seconds

  // ---- createEventConverter ----
  /** Nesting depth of a payload (the root object is depth 1) above which it is dead-lettered. */
  maxDepth: 64,
});
