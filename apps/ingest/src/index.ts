// Public surface of the ingest app (package.json#exports): createIngest for embedding and tests,
// the converter that bench/ingest's minimal loops share with the app, and the dead-letter header
// names a replay tool reads. Everything else is private. Apps never import each other.
export { createIngest, type Ingest, type IngestDeps, type IngestOptions, type IngestStats } from './ingest.js';
export { createEventConverter, type ConvertResult, type EventConverter, type EventConverterOptions } from './event-converter.js';
export { DEAD_LETTER_HEADERS, type DeadLetterReason } from './dead-letter.js';
