// Public surface of the ingest app for its own tests and tooling; apps never import each other.
export { createIngest, type EventConverter, type Ingest, type IngestDeps, type IngestOptions, type IngestStats } from './ingest.js';
export { createEventConverter, type ConvertResult } from './event-converter.js';
export { DEAD_LETTER_HEADERS, type DeadLetterReason } from './dead-letter.js';
