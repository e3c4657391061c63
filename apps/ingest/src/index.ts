// Public surface of the ingest app (package.json#exports): what it takes to run ingest in-process
// the way main.ts does (the factory, its metrics, its Redis client and the kafkajs log bridge; the
// integration tests use exactly this), the converter that bench/ingest's minimal loops share with the app, and the
// dead-letter header names a replay tool reads. Everything else is private. Apps never import each other.
export { createIngest, type Ingest, type IngestDeps, type IngestOptions, type IngestStats } from './ingest.js';
export { createIngestMetrics, type IngestMetrics } from './metrics.js';
export { createIngestRedis, type IngestRedis, type IngestRedisOptions } from './redis-client.js';
export { kafkaLogCreator } from './kafka-logger.js';
export { createEventConverter, type ConvertResult, type EventConverter } from './event-converter.js';
// The wire-format (Avro) converter, for bench/ingest's JSON-vs-Avro comparison on the same events.
export { createWireConverter, type WireConverterOptions, type WireFormat } from './wire-converter.js';
export { DEAD_LETTER_HEADERS, DEAD_LETTER_TRUNCATION_HEADERS, type DeadLetterReason } from './dead-letter.js';
// The per-chunk spans (decision 0020), for bench/ingest's allocation count of tracing without sampling.
export { createChunkTracer, type ChunkTrace, type ChunkTracer } from './chunk-tracing.js';
