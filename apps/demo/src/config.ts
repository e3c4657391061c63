import { kafkaSecuritySpec } from '@wirestream/connect';
import { csvList, defineConfigSpec, envVar, hostPort, integer, z } from '@wirestream/config';
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
