#!/usr/bin/env node
// Entry point: read config, build real clients, wire, start, stop on SIGTERM. Logic lives in ingest.ts and the parts it wires.
import { Kafka, logLevel } from 'kafkajs';
import { Redis } from 'ioredis';
import { loadConfigOrExit } from '@wirestream/config';
import { auctionSchemaPath, loadWirestreamSchema } from '@wirestream/schema';
import { createLogger, createMetricsRegistry } from '@wirestream/telemetry';
import { ingestConfigSpec } from './config.js';
import { createIngest } from './ingest.js';
import { createHealthServer } from './health-server.js';
import { kafkaLogCreator } from './kafka-logger.js';
import { createIngestMetrics } from './metrics.js';

const config = loadConfigOrExit(ingestConfigSpec, process.env, { file: process.env['WIRESTREAM_CONFIG_FILE'] });
const logger = createLogger({ name: 'ingest', level: config.logLevel });
const schema = loadWirestreamSchema(config.schemaPath ?? auctionSchemaPath);
const kafka = new Kafka({
  clientId: config.kafkaClientId,
  brokers: [...config.kafkaBrokers],
  logLevel: logLevel.WARN,
  logCreator: kafkaLogCreator(logger),
});
const redis = new Redis(config.redisUrl, {
  // Ingest owns retrying (batch-processor.ts deliverChunk: pause consumption, heartbeat, redo the whole
  // chunk once Redis is back), so ioredis must fail fast instead of parking commands:
  // - no offline queue: a publish while Redis is away fails at once instead of waiting unbounded
  //   in memory, where it would also block stop() (the batch in flight never finished);
  // - 0 retries per request: a command in flight when the connection drops fails at the drop
  //   instead of being re-sent later behind the chunk's back (the chunk is redone as a whole;
  //   history XADDs are idempotent by offset id and the gateway drops duplicate positions);
  // - no commandTimeout: it arms a timer per command (two per event); ingest times out each
  //   chunk's pipeline instead (redisTimeoutMs) and treats a Redis that never answers as down.
  enableOfflineQueue: false,
  maxRetriesPerRequest: 0,
  // Reconnect forever, at most 2 s apart: consumption resumes within that of Redis coming back.
  retryStrategy: (times) => Math.min(times * 200, 2_000),
  connectionName: 'wirestream-ingest',
});
redis.on('ready', () => logger.info('redis ready'));
redis.on('error', (err: Error) => logger.warn({ err }, 'redis error'));

const registry = createMetricsRegistry({ service: 'ingest' });
const metrics = createIngestMetrics(registry, schema.topics);

const ingest = createIngest(
  { kafka, redis, schema, logger, metrics },
  {
    groupId: config.groupId,
    channelPrefix: config.channelPrefix,
    dlqSuffix: config.dlqSuffix,
    maxMessageBytes: config.maxMessageBytes,
    publishChunkSize: config.publishChunkSize,
    partitionsConcurrently: config.partitionsConcurrently,
    fromBeginning: config.fromBeginning,
    fetchMaxWaitMs: config.fetchMaxWaitMs,
    historyLength: config.historyLength,
    historyPrefix: config.historyPrefix,
    maxRetries: config.maxRetries,
  },
);

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
    logger.fatal({ err }, 'ingest failed to start');
    process.exit(1);
  }
}
