#!/usr/bin/env node
// The demo producer: realistic camelCase auction events into Kafka, keyed by listing id.
import { Kafka, Partitioners, logLevel } from 'kafkajs';
import { buildOrExit, loadConfigOrExit } from '@wirestream/config';
import { kafkaSecurity } from '@wirestream/connect';
import { createAuctionEventGenerator, DEMO_TOPICS } from '@wirestream/demo-events';
import { createLogger } from '@wirestream/telemetry';
import { producerConfigSpec } from './config.js';
import type { DemoBid } from './protobuf-encoder.js';

const config = loadConfigOrExit(producerConfigSpec, process.env, { file: process.env['WIRESTREAM_CONFIG_FILE'] });
const logger = createLogger({ name: 'demo-producer', level: config.logLevel });
const { summary, ...security } = await buildOrExit(() => kafkaSecurity(config));
logger.info({ brokers: config.kafkaBrokers, security: summary }, 'connecting to Kafka');
const kafka = new Kafka({ clientId: 'wirestream-demo-producer', brokers: [...config.kafkaBrokers], logLevel: logLevel.ERROR, ...security });

// With DEMO_AVRO_SCHEMA_DIR, bid events go out in Avro (the wire format), listing events stay JSON, and each
// bid also becomes a Protobuf price-events message: the three paths of ingest.
const encodePrice = config.avroSchemaDir === undefined ? undefined : await (await import('./protobuf-encoder.js')).createPriceEncoder(config.avroSchemaDir);
const topics = encodePrice === undefined ? [...DEMO_TOPICS] : [...DEMO_TOPICS, encodePrice.topic];

const admin = kafka.admin();
await admin.connect();
const existing = new Set(await admin.listTopics());
const missing = topics.filter((t) => !existing.has(t));
if (missing.length > 0) {
  await admin.createTopics({ waitForLeaders: true, topics: missing.map((topic) => ({ topic, numPartitions: config.partitions })) });
  logger.info({ topics: missing, partitions: config.partitions }, 'created demo topics');
}
await admin.disconnect();

// Loaded only with DEMO_AVRO_SCHEMA_DIR: Confluent's serdes pull in its KMS SDKs (~0.7 s to load on a quiet machine, seconds
// on a busy one), which a JSON-only producer, or one exiting on a bad setting, should not wait for.
const encodeBid = config.avroSchemaDir === undefined ? undefined : await (await import('./avro-encoder.js')).createAvroEncoder(config.avroSchemaDir, 'bid-events');
if (encodeBid !== undefined) logger.info({ schemaDir: config.avroSchemaDir, schemaId: encodeBid.id }, 'bid-events in Avro');
if (encodePrice !== undefined) logger.info({ schemaDir: config.avroSchemaDir, schemaId: encodePrice.id }, 'price-events in Protobuf, one per bid');

// Java-compatible murmur2 partitioning: a listing's events share a partition, so they stay in order.
const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
await producer.connect();
const generator = createAuctionEventGenerator({ seed: Date.now() % 2 ** 31, listings: config.listings, realTime: true });

let sent = 0;
let stopping = false;
process.on('SIGTERM', () => (stopping = true));
process.on('SIGINT', () => (stopping = true));
const intervalMs = 1_000 / config.ratePerSecond;
logger.info({ ratePerSecond: config.ratePerSecond, topics }, 'demo producer started');

// Send in small ticks so high rates batch and low rates stay smooth.
const tickMs = Math.max(intervalMs, 50);
const perTick = Math.max(1, Math.round(tickMs / intervalMs));
while (!stopping && (config.count === undefined || sent < config.count)) {
  const started = Date.now();
  const n = config.count === undefined ? perTick : Math.min(perTick, config.count - sent);
  const byTopic = new Map<string, { key: string; value: string | Buffer }[]>();
  for (let i = 0; i < n; i++) {
    const event = generator.next();
    const list = byTopic.get(event.topic) ?? [];
    list.push({ key: event.key, value: event.topic === 'bid-events' && encodeBid !== undefined ? await encodeBid.encode(event.value) : JSON.stringify(event.value) });
    byTopic.set(event.topic, list);
    if (event.topic === 'bid-events' && encodePrice !== undefined) {
      const prices = byTopic.get(encodePrice.topic) ?? [];
      prices.push({ key: event.key, value: encodePrice.encode(event.value as unknown as DemoBid) });
      byTopic.set(encodePrice.topic, prices);
    }
  }
  await producer.sendBatch({ acks: -1, topicMessages: [...byTopic].map(([topic, messages]) => ({ topic, messages })) });
  sent += n;
  if (sent % (config.ratePerSecond * 10) < n) logger.info({ sent }, 'demo events produced');
  await new Promise((r) => setTimeout(r, Math.max(0, tickMs - (Date.now() - started))));
}
await producer.disconnect();
logger.info({ sent }, 'demo producer done');
