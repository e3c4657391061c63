import { kafkaSecuritySpec } from '@wirestream/connect';
import { csvList, defineConfigSpec, durationMs, envVar, hostPort, integer, port, z } from '@wirestream/config';
import { LOG_LEVELS } from '@wirestream/telemetry';

/** Settings of the demo producer. */
export const producerConfigSpec = defineConfigSpec({
  kafkaBrokers: envVar({ name: 'KAFKA_BROKERS', schema: csvList(hostPort()), default: ['127.0.0.1:9092'], description: 'Kafka bootstrap brokers.' }),
  ...kafkaSecuritySpec,
  ratePerSecond: envVar({ name: 'DEMO_RATE', schema: integer({ min: 1, max: 100_000 }), default: 5, description: 'Demo events produced per second.' }),
  count: envVar({ name: 'DEMO_COUNT', schema: integer({ min: 1 }), optional: true, description: 'Stop after this many events (default: run until stopped).' }),
  listings: envVar({ name: 'DEMO_LISTINGS', schema: integer({ min: 1, max: 999_999 }), default: 20, description: 'Distinct listing ids the demo events use.' }),
  partitions: envVar({ name: 'DEMO_PARTITIONS', schema: integer({ min: 1, max: 1_000 }), default: 3, description: 'Partitions of the demo topics when the producer creates them.' }),
  avroSchemaDir: envVar({ name: 'DEMO_AVRO_SCHEMA_DIR', schema: z.string().trim().min(1), optional: true, description: 'Schema directory with a bid-events-value Avro schema and a price-events-value .proto: bid events are then written in Avro (the Confluent wire format) instead of JSON, and each bid also as a Protobuf price-events message, as scripts/start.sh does.' }),
  logLevel: envVar({ name: 'LOG_LEVEL', schema: z.enum(LOG_LEVELS), default: 'info', description: 'Lowest log level written.' }),
});

/** Settings of the demo's seller service (sellers-subgraph.ts), the source of the demo's `@lookup` fields. */
export const sellersConfigSpec = defineConfigSpec({
  host: envVar({ name: 'SELLERS_HOST', schema: z.string().trim().min(1), default: '127.0.0.1', description: 'Address the seller subgraph listens on.' }),
  port: envVar({ name: 'SELLERS_PORT', schema: port(), default: 4001, description: 'Port of the seller subgraph (`/graphql`); 0 picks a free one, logged at start.' }),
  latencyMs: envVar({ name: 'SELLERS_LATENCY_MS', schema: durationMs({ maxMs: 60_000 }), default: 0, description: 'Every answer waits this long first: a slow service, for benchmarks and fault tests.' }),
  logLevel: envVar({ name: 'LOG_LEVEL', schema: z.enum(LOG_LEVELS), default: 'info', description: 'Lowest log level written.' }),
});
