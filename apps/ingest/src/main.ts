#!/usr/bin/env node
// Entry point: read config, build real clients, wire, start, stop on SIGTERM. Logic lives in ingest.ts and the parts it wires.
import { Kafka, logLevel } from 'kafkajs';
import { buildOrExit, EXIT_CONFIG, loadConfigOrExit } from '@wirestream/config';
import { describeKafkaFailure, kafkaSecurity, redisSecurity } from '@wirestream/connect';
import { checkSdlAtStart, createSchemaDecoders, createSchemaSource } from '@wirestream/registry';
import { auctionSchemaPath, loadWirestreamSchema, needsSchemaSource, SchemaError, type WirestreamSchema } from '@wirestream/schema';
import { keyConverter } from '@wirestream/transform';
import { createLogger, createMetricsRegistry, startTracing } from '@wirestream/telemetry';
import { ingestConfigSpec } from './config.js';
import { createEventConverter } from './event-converter.js';
import { createIngest } from './ingest.js';
import { createHealthServer } from './health-server.js';
import { kafkaLogCreator } from './kafka-logger.js';
import { createIngestMetrics } from './metrics.js';
import { createIngestRedis, type IngestRedis } from './redis-client.js';

const config = loadConfigOrExit(ingestConfigSpec, process.env, { file: process.env['WIRESTREAM_CONFIG_FILE'] });
const logger = createLogger({ name: 'ingest', level: config.logLevel });
const tracing = await startTracing(config, { defaultServiceName: 'wirestream-ingest' });
if (tracing !== undefined) logger.info(tracing.summary, 'tracing: exporting spans over OTLP/HTTP');
// A schema that cannot be read or served is configuration: every problem in one block on stderr, exit 78.
let schema: WirestreamSchema;
try {
  schema = loadWirestreamSchema(config.schemaPath ?? auctionSchemaPath, { setting: ingestConfigSpec.schemaPath.name });
} catch (err) {
  if (!(err instanceof SchemaError)) throw err;
  process.stderr.write(`${err.message}\n`);
  process.exit(EXIT_CONFIG);
}
if (schema.added.length > 0) logger.info({ added: schema.added }, 'schema: added what the SDL does not declare (docs/schema.md)');
// --- Schema Registry / schema directory (issue #14) ---
const wireTopics = schema.topics.flatMap((topic) => {
  const route = schema.routesForTopic(topic)[0];
  return route !== undefined && (needsSchemaSource(route.format) || needsSchemaSource(route.keyFormat)) ? [{ topic, format: route.format, keyFormat: route.keyFormat }] : [];
});
const schemaSource = await buildOrExit(() => createSchemaSource(config, wireTopics.map((t) => `topic ${t.topic} (format ${t.format}, keyFormat ${t.keyFormat})`)));
const schemaDecoders = schemaSource === undefined ? undefined : createSchemaDecoders({ source: schemaSource.source, fieldName: keyConverter(config.keyStyle), maxSchemas: config.schemaCacheSize });
if (schemaSource !== undefined) logger.info({ schemas: schemaSource.summary, topics: wireTopics.map((t) => t.topic) }, 'schemas of wire-format topics from');
// Every field the SDL selects on a wire-format topic must accept its subject's values, every registered version of it
// (decisions 0019, 0035): a field that does not is exit 78.
const schemaCheckErrors = await checkSdlAtStart(schema, schemaSource?.subjects, { keyStyle: config.keyStyle, log: logger });
if (schemaCheckErrors.length > 0) {
  process.stderr.write(`${schemaCheckErrors.join('\n')}\n`);
  process.exit(EXIT_CONFIG);
}
// --- end of the schema-source block ---
const { summary: kafkaSummary, ...kafkaSecurityOptions } = await buildOrExit(() => kafkaSecurity(config));
const { summary: redisSummary, ...redisSecurityOptions } = await buildOrExit(() => redisSecurity(config, config.redisUrl));
logger.info({ brokers: config.kafkaBrokers, kafka: kafkaSummary, redis: redisSummary }, 'connecting to Kafka and Redis');
const kafka = new Kafka({
  clientId: config.kafkaClientId,
  brokers: [...config.kafkaBrokers],
  ...kafkaSecurityOptions,
  logLevel: logLevel.WARN,
  logCreator: kafkaLogCreator(logger),
});
// Fail-fast on purpose (no offline queue, 0 retries per request): ingest redoes a chunk itself. See redis-client.ts.
let redis: IngestRedis;
try {
  redis = createIngestRedis({ mode: config.redisMode, url: config.redisUrl, logger, security: redisSecurityOptions });
} catch (err) {
  // A REDIS_URL that cannot be a cluster seed: a configuration error, not worth a restart.
  logger.fatal({ err }, 'invalid Redis configuration');
  process.exit(EXIT_CONFIG);
}

/** Known Kafka failures in the words of the settings: one line, exit 78 when only they can fix it (1 otherwise). */
function exitIfConfigFailure(err: unknown): void {
  const failure = describeKafkaFailure(err, { brokers: config.kafkaBrokers, groupId: config.groupId, secured: kafkaSummary !== 'plaintext' });
  if (!failure) return;
  logger.fatal({ err }, failure.message);
  process.stderr.write(`ingest cannot start: ${failure.message}\n`);
  process.exit(failure.config ? EXIT_CONFIG : 1);
}

const registry = createMetricsRegistry({ service: 'ingest' });
const metrics = createIngestMetrics(registry, schema.topics);

// Options that contradict each other or the schema (e.g. a dead-letter name Kafka refuses) are configuration: one line, exit 78.
const ingest = createIngestOrExit(
  {
    kafka,
    redis,
    schema,
    logger,
    metrics,
    // Built here rather than by createIngest, which passes it only maxMessageBytes: INGEST_MAX_DEPTH is read at this edge.
    onConsumerCrash: (err, everJoined) => {
      // Before the first join a denied group cannot heal by itself; later, a crash is kafkajs's to restart.
      if (!everJoined) exitIfConfigFailure(err);
    },
    convert: createEventConverter({ maxMessageBytes: config.maxMessageBytes, maxDepth: config.maxDepth, keyStyle: config.keyStyle }),
    ...(schemaDecoders === undefined ? {} : { schemaDecoders }),
    ...(tracing === undefined ? {} : { tracer: tracing.tracer }),
  },
  {
    groupId: config.groupId,
    channelPrefix: config.channelPrefix,
    dlqSuffix: config.dlqSuffix,
    maxMessageBytes: config.maxMessageBytes,
    createTopics: config.createTopics,
    newTopics: { partitions: config.topicPartitions, replicationFactor: config.topicReplication },
    publishChunkSize: config.publishChunkSize,
    partitionsConcurrently: config.partitionsConcurrently,
    fromBeginning: config.fromBeginning,
    fetchMaxWaitMs: config.fetchMaxWaitMs,
    fetchMaxBytesPerPartition: config.fetchMaxBytesPerPartition,
    fetchMaxBytes: config.fetchMaxBytes,
    historyLength: config.historyLength,
    historyPrefix: config.historyPrefix,
    redisMode: config.redisMode,
    redisWaitReplicas: config.redisWaitReplicas,
    redisWaitTimeoutMs: config.redisWaitTimeoutMs,
    maxRetries: config.maxRetries,
  },
);

function createIngestOrExit(...args: Parameters<typeof createIngest>): ReturnType<typeof createIngest> {
  try {
    return createIngest(...args);
  } catch (err) {
    if (!(err instanceof RangeError)) throw err;
    process.stderr.write(`ingest cannot start: ${err.message}\n`);
    process.exit(EXIT_CONFIG);
  }
}

const healthServer = createHealthServer({ registry, isReady: () => ingest.isReady(), notReadyReason: () => ingest.notReadyReason() });
healthServer.on('error', (err) => {
  logger.fatal({ err, port: config.httpPort }, 'health and metrics server failed (INGEST_HTTP_PORT in use?)');
  process.exit(1);
});
healthServer.listen(config.httpPort, config.httpHost, () => {
  const address = healthServer.address();
  logger.info({ port: typeof address === 'object' && address ? address.port : config.httpPort }, 'health and metrics server listening');
});

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, 'shutting down');
  try {
    await ingest.stop();
  } catch (err) {
    logger.error({ err }, 'error while stopping');
  }
  await redis.quit().catch(() => redis.disconnect());
  // The last chunks' spans: exported before exit (bounded by the exporter's own timeout).
  await tracing?.shutdown().catch((err: unknown) => logger.warn({ err }, 'could not export the last spans'));
  healthServer.close();
  logger.info('bye');
  process.exit(0);
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));

try {
  await ingest.start();
} catch (err) {
  // A signal during start-up makes start() fail on purpose; shutdown() owns the exit then.
  if (!stopping) {
    exitIfConfigFailure(err);
    logger.fatal({ err }, 'ingest failed to start');
    process.exit(1);
  }
}
